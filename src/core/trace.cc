#include "src/core/trace.h"

#include <random>

namespace crmd::trace {
namespace {

bool IsLowerHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool AllZero(std::string_view s) { return s.find_first_not_of('0') == std::string_view::npos; }

uint8_t HexByte(std::string_view s) {
  auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  return static_cast<uint8_t>(v(s[0]) * 16 + v(s[1]));
}

// Ids need to be unique, not secret: a per-thread generator seeded from the OS.
std::string RandomHex(size_t chars) {
  thread_local std::mt19937_64 gen{[] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(chars, '0');
  while (AllZero(out)) {
    for (size_t i = 0; i < chars; i += 16) {
      uint64_t r = gen();
      for (size_t j = i; j < chars && j < i + 16; ++j, r >>= 4) out[j] = kHex[r & 0xf];
    }
  }
  return out;
}

}  // namespace

std::optional<Parent> ParseTraceparent(std::string_view v) {
  // version "-" trace-id "-" parent-id "-" trace-flags
  if (v.size() < 55) return std::nullopt;
  std::string_view version = v.substr(0, 2);
  if (!IsLowerHex(version) || version == "ff") return std::nullopt;
  if (version == "00" && v.size() != 55) return std::nullopt;
  if (v.size() > 55 && v[55] != '-') return std::nullopt;  // a later version's extra fields
  if (v[2] != '-' || v[35] != '-' || v[52] != '-') return std::nullopt;
  std::string_view trace_id = v.substr(3, 32), parent_id = v.substr(36, 16),
                   flags = v.substr(53, 2);
  if (!IsLowerHex(trace_id) || !IsLowerHex(parent_id) || !IsLowerHex(flags)) return std::nullopt;
  if (AllZero(trace_id) || AllZero(parent_id)) return std::nullopt;
  return Parent{.trace_id = std::string(trace_id),
                .parent_id = std::string(parent_id),
                .flags = HexByte(flags)};
}

bool ValidTracestate(std::string_view v) {
  if (v.empty() || v.size() > 512) return false;
  int members = 1;
  for (char c : v) {
    if (c < 0x20 || c > 0x7e) return false;
    if (c == ',') ++members;
  }
  return members <= 32;
}

std::string Context::Traceparent() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "00-" + trace_id + "-" + span_id + "-";
  out += kHex[flags >> 4];
  out += kHex[flags & 0xf];
  return out;
}

Context Context::Child() const {
  return Context{.trace_id = trace_id,
                 .span_id = NewSpanId(),
                 .parent_id = span_id,
                 .flags = flags,
                 .tracestate = tracestate};
}

Context Continue(std::optional<std::string_view> traceparent,
                 std::optional<std::string_view> tracestate) {
  std::optional<Parent> parent;
  if (traceparent) parent = ParseTraceparent(*traceparent);
  if (!parent) return Start();
  Context c{.trace_id = std::move(parent->trace_id),
            .span_id = NewSpanId(),
            .parent_id = std::move(parent->parent_id),
            .flags = parent->flags,
            .tracestate = {}};
  if (tracestate && ValidTracestate(*tracestate)) c.tracestate = std::string(*tracestate);
  return c;
}

Context Start() {
  return Context{.trace_id = NewTraceId(),
                 .span_id = NewSpanId(),
                 .parent_id = {},
                 .flags = 0,
                 .tracestate = {}};
}

std::string NewTraceId() { return RandomHex(32); }
std::string NewSpanId() { return RandomHex(16); }

}  // namespace crmd::trace

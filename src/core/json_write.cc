#include "src/core/json_write.h"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "src/core/utf8.h"

namespace crmd {
namespace {

using nlohmann::json;

static_assert(std::endian::native == std::endian::little, "AppendString reads little-endian words");

// Appends `s` as a JSON string; false if it is not valid UTF-8 (nothing else is promised
// about `out` then).
//
// Written through a pointer into room made first (two bytes per input byte: a quote or a
// backslash doubles, everything else is copied; a control byte's \u00XX makes more room as
// it goes): a JSON text inside a string (a tool result's text block) has a quote every few
// bytes, and two appends per quote made get_contact's text block cost 10,200 instructions
// (7,000 this way).
bool AppendString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  const size_t start = out.size();
  out.resize(start + 2 * s.size() + 2);
  char* p = out.data() + start;
  *p++ = '"';
  const char* in = s.data();
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    // Eight bytes at a time up to the first that is not plain: below 0x20, 0x80 or above,
    // '"' or '\\'. The lowest byte the tests flag is always a real one (the zero-byte test
    // can misfire only above a byte that really matches); the words are little-endian.
    // The word is stored whole and the pointer moves past its plain bytes only: the room
    // left is at least 2 * (n - i) + 1 bytes, 17 or more here.
    while (i + 8 <= n) {
      uint64_t v;
      std::memcpy(&v, in + i, 8);
      constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
      auto zero_byte = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
      const uint64_t special = (v & kHigh) | ((v - 0x20 * kOnes) & ~v & kHigh) |
                               zero_byte(v ^ ('"' * kOnes)) | zero_byte(v ^ ('\\' * kOnes));
      std::memcpy(p, &v, 8);
      if (special != 0) {
        const size_t plain = static_cast<size_t>(std::countr_zero(special)) / 8;
        p += plain;
        i += plain;
        break;
      }
      p += 8;
      i += 8;
    }
    if (i >= n) break;
    const unsigned char c = static_cast<unsigned char>(in[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      *p++ = static_cast<char>(c);
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const size_t len = Utf8Sequence(s, i);
      if (len == 0) {
        out.resize(start);
        return false;
      }
      std::memcpy(p, in + i, len);
      p += len;
      i += len;
      continue;
    }
    if (c == '"' || c == '\\') {
      p[0] = '\\';
      p[1] = static_cast<char>(c);
      p += 2;
      ++i;
      continue;
    }
    char esc = 0;
    switch (c) {
      case '\b':
        esc = 'b';
        break;
      case '\t':
        esc = 't';
        break;
      case '\n':
        esc = 'n';
        break;
      case '\f':
        esc = 'f';
        break;
      case '\r':
        esc = 'r';
        break;
      default:
        break;
    }
    if (esc) {
      p[0] = '\\';
      p[1] = esc;
      p += 2;
    } else {
      // \u00XX: six bytes for one, four more than the room counted for it.
      const size_t at = static_cast<size_t>(p - out.data());
      out.resize(out.size() + 4);
      p = out.data() + at;
      const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      std::memcpy(p, u, sizeof u);
      p += sizeof u;
    }
    ++i;
  }
  *p++ = '"';
  out.resize(static_cast<size_t>(p - out.data()));
  return true;
}

template <typename Int>
void AppendInt(std::string& out, Int v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

bool Append(std::string& out, const json& v, const JsonSerialized* known) {
  if (known && &v == known->node) {
    out.append(known->text);
    return true;
  }
  switch (v.type()) {
    case json::value_t::null:
      out.append("null");
      return true;
    case json::value_t::boolean:
      out.append(v.get_ref<const json::boolean_t&>() ? "true" : "false");
      return true;
    case json::value_t::number_integer:
      AppendInt(out, v.get_ref<const json::number_integer_t&>());
      return true;
    case json::value_t::number_unsigned:
      AppendInt(out, v.get_ref<const json::number_unsigned_t&>());
      return true;
    case json::value_t::number_float:
      out.append(v.dump());
      return true;  // nlohmann's float format
    case json::value_t::string:
      return AppendString(out, v.get_ref<const json::string_t&>());
    case json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& e : v.get_ref<const json::array_t&>()) {
        if (!first) out.push_back(',');
        first = false;
        if (!Append(out, e, known)) return false;
      }
      out.push_back(']');
      return true;
    }
    case json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, e] : v.get_ref<const json::object_t&>()) {
        if (!first) out.push_back(',');
        first = false;
        if (!AppendString(out, key)) return false;
        out.push_back(':');
        if (!Append(out, e, known)) return false;
      }
      out.push_back('}');
      return true;
    }
    case json::value_t::binary:
    case json::value_t::discarded:
      return false;  // never in an answer; nlohmann's dump decides
  }
  return false;
}

}  // namespace

std::string DumpJson(const json& value, json::error_handler_t on_invalid_utf8) {
  std::string out;
  out.reserve(256);
  if (Append(out, value, nullptr)) return out;
  return value.dump(-1, ' ', false, on_invalid_utf8);
}

std::string DumpJson(const json& value, json::error_handler_t on_invalid_utf8,
                     const JsonSerialized& known) {
  std::string out;
  out.reserve(256 + known.text.size() * 2);
  if (Append(out, value, &known)) return out;
  return value.dump(-1, ' ', false, on_invalid_utf8);
}

void AppendJsonString(std::string& out, std::string_view s) {
  const size_t mark = out.size();
  if (AppendString(out, s)) return;
  out.resize(mark);
  out.append(json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace));
}

void AppendJsonInt(std::string& out, int64_t v) { AppendInt(out, v); }

void AppendJson(std::string& out, const json& value) {
  const size_t mark = out.size();
  if (Append(out, value, nullptr)) return;
  out.resize(mark);
  out.append(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace crmd

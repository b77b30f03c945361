#pragma once
// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and
// `tracestate` a request arrives with (HTTP headers, or MCP `_meta` at 2026-07-28), the
// span crmd handles it in, and the child span of each call crmd makes on its behalf
// (outgoing webhooks). crmd exports no spans itself; the ids go into every log line
// (src/core/log.h) and onward to receivers, so an operator can follow one assistant's
// request from its client through crmd's log to the webhook receiver.
//
// Plain values; the id generators are thread-safe.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crmd::trace {

// A traceparent as received: version 00 fields (a later version's first four fields).
struct Parent {
  std::string trace_id;   // 32 lowercase hex, not all zero
  std::string parent_id;  // 16 lowercase hex, not all zero
  uint8_t flags = 0;      // trace-flags; bit 0 = sampled
};

// Parses a traceparent value (§3.2): version 2 hex (not ff); version 00 is exactly
// "00-<32 hex>-<16 hex>-<2 hex>", lowercase, ids not all zero; a higher version may carry
// more after a '-' (§3.2.4, parsed as 00). nullopt for anything else.
std::optional<Parent> ParseTraceparent(std::string_view value);

// A tracestate value worth passing on (§3.3): at most 512 characters of printable ASCII
// and at most 32 list members. Anything else is dropped (§3.3.1.1 allows discarding).
bool ValidTracestate(std::string_view value);

struct Context {
  std::string trace_id;   // 32 hex; empty only in a default-constructed Context
  std::string span_id;    // this hop's span (16 hex): the parent-id of calls crmd makes
  std::string parent_id;  // the caller's span; empty when crmd started the trace
  uint8_t flags = 0;
  std::string tracestate;  // as received (when valid), passed on unchanged

  bool empty() const { return trace_id.empty(); }
  // "00-<trace_id>-<span_id>-<flags>": what a call made from this span sends.
  std::string Traceparent() const;
  // The context of a call made from this span: same trace, flags and tracestate, a new
  // span id whose parent is this span.
  Context Child() const;
};

// Continues the caller's trace when `traceparent` is valid (a new span id, its parent the
// caller's), else starts a new trace (and ignores tracestate, §3.3.1.1).
Context Continue(std::optional<std::string_view> traceparent,
                 std::optional<std::string_view> tracestate);
// A new trace with a new span (sampled flag clear).
Context Start();

// Random ids (not all zero), lowercase hex.
std::string NewTraceId();
std::string NewSpanId();

}  // namespace crmd::trace

#pragma once
// The W3C trace context that background work continues (docs/operations.md "Traces"):
// the traceparent and tracestate of the request that caused the work, stored with the
// work's row (an outbox event, an activated campaign, an automation or sequence run) so
// that the job's log lines, whichever node runs it and however late, carry that trace.
// Plain values; any thread.
#include <optional>
#include <string>

#include "src/core/trace.h"

namespace crmd::crm {

struct TraceLink {
  std::optional<std::string> traceparent;  // crmd's span of the causing request
  std::optional<std::string> tracestate;
};

// The trace of the request being handled on this thread (the server's log scope); empty
// outside any scope, e.g. in crmctl.
TraceLink CurrentTraceLink();

// A new span for one piece of the work (a message, a step), the child of the stored
// traceparent; a new trace when none was stored (empty) or it is not valid.
trace::Context ContinueTrace(const std::string& traceparent, const std::string& tracestate);

}  // namespace crmd::crm

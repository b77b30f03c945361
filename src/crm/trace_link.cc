#include "src/crm/trace_link.h"

#include "src/core/log.h"

namespace crmd::crm {

TraceLink CurrentTraceLink() {
  TraceLink link;
  if (const LogContext* ctx = CurrentLogContext(); ctx && !ctx->trace.empty()) {
    link.traceparent = ctx->trace.Traceparent();
    if (!ctx->trace.tracestate.empty()) link.tracestate = ctx->trace.tracestate;
  }
  return link;
}

trace::Context ContinueTrace(const std::string& traceparent, const std::string& tracestate) {
  if (traceparent.empty()) return trace::Start();
  return trace::Continue(
      traceparent, tracestate.empty() ? std::nullopt : std::optional<std::string_view>(tracestate));
}

}  // namespace crmd::crm

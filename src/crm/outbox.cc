#include "src/crm/outbox.h"

#include "src/crm/events.h"
#include "src/crm/outbox_repo.h"
#include "src/crm/trace_link.h"

namespace crmd::crm {

Status Outbox::Append(store::Conn& conn, std::string_view event_type, int64_t contact_id,
                      const nlohmann::json& data) {
  return AppendSerialized(conn, event_type, contact_id, data.dump());
}

Status Outbox::AppendSerialized(store::Conn& conn, std::string_view event_type, int64_t contact_id,
                                std::string data) {
  if (!events::IsKnown(event_type))
    return Fail(Error::Internal("unknown event type " + std::string(event_type)));
  // The trace of the request being handled on this thread (the server's log scope), so
  // that the webhook deliveries of this event continue it.
  TraceLink trace = CurrentTraceLink();
  return outbox_repo::Insert(conn, std::string(event_type), contact_id, std::move(data),
                             clock_->NowUnix(), std::move(trace.traceparent),
                             std::move(trace.tracestate));
}

Result<std::vector<OutboxEvent>> Outbox::After(store::Conn& conn, int64_t after_id, int limit) {
  return outbox_repo::After(conn, after_id, limit);
}

}  // namespace crmd::crm

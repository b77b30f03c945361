#include "src/crm/outbox.h"

#include "src/crm/events.h"
#include "src/crm/outbox_repo.h"

namespace crmd::crm {

Status Outbox::Append(store::Conn& conn, std::string_view event_type, int64_t contact_id,
                      const nlohmann::json& data) {
  if (!events::IsKnown(event_type))
    return Fail(Error::Internal("unknown event type " + std::string(event_type)));
  return outbox_repo::Insert(conn, std::string(event_type), contact_id, data.dump(),
                             clock_->NowUnix());
}

Result<std::vector<OutboxEvent>> Outbox::After(store::Conn& conn, int64_t after_id, int limit) {
  return outbox_repo::After(conn, after_id, limit);
}

}  // namespace crmd::crm

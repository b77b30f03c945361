#include "src/marketing/email_events.h"

#include "src/crm/events.h"
#include "src/crm/outbox_repo.h"
#include "src/crm/trace_link.h"
#include "src/marketing/campaign_sends_repo.h"

namespace crmd::marketing {

nlohmann::json EmailEventData(const EmailEvent& e) {
  nlohmann::json data = {
      {"contact_id", e.contact_id},
      {"email", e.email},
      {"source", e.source},
      {"source_id", e.source_id},
      {"campaign_id", e.source == "campaign" ? nlohmann::json(e.source_id) : nlohmann::json()},
      {"message_id", e.message_id ? nlohmann::json(*e.message_id) : nlohmann::json()}};
  for (const auto& [k, v] : e.detail.items()) data[k] = v;
  return data;
}

Status AppendEmailEvent(store::Conn& c, int64_t now, const EmailEvent& e) {
  if (!crm::events::IsEmail(e.type))
    return Fail(Error::Internal("unknown email event " + std::string(e.type)));
  crm::TraceLink trace = crm::CurrentTraceLink();
  return crm::outbox_repo::Insert(c, std::string(e.type), e.contact_id, EmailEventData(e).dump(),
                                  now, std::move(trace.traceparent), std::move(trace.tracestate));
}

Status AppendCampaignEmailEvent(store::Conn& c, int64_t now, std::string_view type,
                                int64_t campaign_id, int64_t contact_id, nlohmann::json detail) {
  auto sent = campaign_sends_repo::MessageOf(c, campaign_id, contact_id);
  if (!sent) return Fail(sent.error());
  if (!*sent) return Ok();
  return AppendEmailEvent(c, now,
                          {.type = type,
                           .contact_id = contact_id,
                           .email = (*sent)->email,
                           .source = "campaign",
                           .source_id = campaign_id,
                           .message_id = (*sent)->message_id,
                           .detail = std::move(detail)});
}

}  // namespace crmd::marketing

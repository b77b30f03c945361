#pragma once
// The email.* outbox events (docs/webhooks.md, "Email events"): what became of a message
// crmd sent, appended where the outcome is recorded and in its transaction, so an event
// exists exactly when its outcome committed. Outgoing webhooks deliver them only to the
// endpoints that list them. Stateless; any thread.
// REQUIRES: every call inside Database::Write.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::marketing {

struct EmailEvent {
  std::string_view type;  // one of crm::events::kEmail
  int64_t contact_id = 0;
  std::string email;
  std::string source = "campaign";  // campaign | sequence | automation
  int64_t source_id = 0;            // the campaign's, sequence's or automation's id
  std::optional<std::string> message_id;
  nlohmann::json detail = nlohmann::json::object();  // merged into data (reason, via, ...)
};

// data = {"contact_id", "email", "source", "source_id", "campaign_id" (null unless a
// campaign), "message_id" (null when unknown)} plus `detail`.
nlohmann::json EmailEventData(const EmailEvent& e);
Status AppendEmailEvent(store::Conn& c, int64_t now, const EmailEvent& e);

// The same for a campaign's recipient whose address and Message-ID are read from the
// send queue (opens, clicks, unsubscribes, reports); nothing when the row is gone.
Status AppendCampaignEmailEvent(store::Conn& c, int64_t now, std::string_view type,
                                int64_t campaign_id, int64_t contact_id,
                                nlohmann::json detail = nlohmann::json::object());

}  // namespace crmd::marketing

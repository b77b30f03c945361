#pragma once
// What crmd keeps about one person, in one JSON document (the export behind REST
// GET /contact/{email}/export, crmctl contacts show --all, the preference page's "Download
// my data" and the console's contact page), and the same records as one timeline, most
// recent first, in pages (get_contact's include ["history"], the console's timeline).
//
// It reads the contact book (profile, custom fields, lists with their membership states,
// tags, the outbox events of the contact, the double opt-in email, the audit rows about the
// contact) and marketing's own rows (each campaign message with its Message-ID and outcome,
// the first open and click, the automation and sequence enrolments), all in one read
// snapshot. It lives in marketing because it needs both (marketing depends on crm, not the
// reverse). docs/crm.md "Each person's own data" lists what is not stored and so not shown.
//
// Reads only. Thread-safe; borrows everything it is given (it must outlive this).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/crm/contacts.h"
#include "src/crm/imports.h"
#include "src/crm/suppression.h"
#include "src/store/db.h"

namespace crmd::marketing {

inline constexpr int kHistoryDefaultLimit = 25;
inline constexpr int kHistoryMaxLimit = 100;

struct HistoryPage {
  nlohmann::json items = nlohmann::json::array();  // most recent first
  std::optional<std::string> next_cursor;          // null on the last page
};

struct ContactHistoryOptions {
  store::Database* db = nullptr;
  const Clock* clock = nullptr;
  crm::ContactService* contacts = nullptr;
  crm::SuppressionList* suppressions = nullptr;  // null: suppression is shown as null
  crm::ImportService* imports = nullptr;         // null: an import's consent note is not shown
};

class ContactHistory {
 public:
  explicit ContactHistory(ContactHistoryOptions options) : o_(options) {}
  ContactHistory(const ContactHistory&) = delete;
  ContactHistory& operator=(const ContactHistory&) = delete;

  // The whole document (docs/crm.md "Each person's own data"); kNotFound for no contact.
  Result<nlohmann::json> Export(int64_t contact_id);
  // The same for an address (normalised first); kNotFound when no contact has it.
  Result<nlohmann::json> ExportByEmail(std::string_view email);
  // A page of the timeline after `cursor` ("" for the newest), at most `limit` entries
  // (1..kHistoryMaxLimit). kInvalidArgument for a cursor this did not make, kNotFound for
  // no contact.
  Result<HistoryPage> Timeline(int64_t contact_id, const std::string& cursor, int limit);

 private:
  const ContactHistoryOptions o_;
};

// The face a write came through, from its audit actor kind: oauth -> mcp, api_key -> rest,
// form -> form, webhook -> webhook, cli -> crmctl, user -> console, system -> system.
std::string FaceOfActor(std::string_view actor_kind);

}  // namespace crmd::marketing

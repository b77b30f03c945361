#pragma once
// SQL that reads what the contact book keeps about one contact, for the export of a
// person's data and their history (marketing::ContactHistory): the memberships with their
// states and times, the contact's events in the outbox, the double opt-in email, and the
// consent evidence (the one table written here). Portable SQL with bound parameters. Stateless; any
// thread, with its own Conn. REQUIRES: inside Database::Read or Write.
//
// The outbox has no index by contact (migration 0055 dropped it so that writes stay
// cheap), so ContactEvents reads the whole table: an answer for one person on request,
// not a query for a hot path.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm::contact_records_repo {

// A list the contact is or was on: state subscribed | unsubscribed | pending.
struct ListMembership {
  int64_t list_id = 0;
  std::string name;
  std::string state;
  int64_t since = 0;                  // when the row was made
  std::optional<int64_t> updated_at;  // the last change of state, when there was one
};
Result<std::vector<ListMembership>> Lists(store::Conn& c, int64_t contact_id);

struct TagMembership {
  int64_t tag_id = 0;
  std::string name;
  int64_t since = 0;
};
Result<std::vector<TagMembership>> Tags(store::Conn& c, int64_t contact_id);

struct ContactEvent {
  int64_t id = 0;
  std::string type;  // contact.created, contact.status_updated, ...
  std::string data;  // JSON text as written
  int64_t occurred_at = 0;
};
// The contact's events, oldest first.
Result<std::vector<ContactEvent>> ContactEvents(store::Conn& c, int64_t contact_id);

// The double opt-in confirmation email queued for the contact, if one was.
struct OptinEmail {
  std::string status;  // pending | sent | failed | skipped
  std::optional<std::string> message_id;
  std::optional<std::string> reason;
  int64_t created_at = 0;
  std::optional<int64_t> sent_at;
};
Result<std::optional<OptinEmail>> Optin(store::Conn& c, int64_t contact_id);

// The evidence of the person's own consent (consent_records, migration 0077).
struct ConsentRecord {
  int64_t id = 0;
  std::string kind;  // form_submission | optin_confirmation
  std::optional<int64_t> form_id;
  std::string ip_address, user_agent;
  int64_t at = 0;
};
// Oldest first.
Result<std::vector<ConsentRecord>> ConsentRecords(store::Conn& c, int64_t contact_id);
// The one write here: a submission or a confirmation click, kept as it came (the user
// agent cut to 512 bytes).
Status AddConsentRecord(store::Conn& c, int64_t contact_id, std::string_view kind,
                        std::optional<int64_t> form_id, std::string_view ip_address,
                        std::string_view user_agent, int64_t now);

}  // namespace crmd::crm::contact_records_repo

#pragma once
// SQL that reads what marketing keeps about one contact, for the export of a person's
// data and their history (ContactHistory): the campaign messages (campaign_recipients,
// with each message's Message-ID, outcome, first open and first click), the automation and
// sequence emails (run_messages), and the automation and sequence enrolments. Only reads; portable
// SQL, bound parameters. Stateless; any thread, with its own Conn. REQUIRES: inside Database::Read
// or Write.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::marketing::contact_history_repo {

// One campaign's message to the contact (a recipient row).
struct CampaignMessage {
  int64_t campaign_id = 0;
  std::string campaign_name;
  std::string subject;
  std::string status;  // pending | sent | failed | skipped
  std::optional<std::string> reason;
  std::optional<std::string> message_id;
  int64_t round = 1;
  std::optional<int64_t> sent_at, opened_at, clicked_at, bounced_at, complained_at, unsubscribed_at;
  int64_t updated_at = 0;
};
// Oldest campaign first.
Result<std::vector<CampaignMessage>> CampaignMessages(store::Conn& c, int64_t contact_id);

// An email an automation's step or a sequence sent to the contact, or that the relay
// refused for good (run_messages).
struct RunMessage {
  int64_t id = 0;
  std::string source;  // automation | sequence
  int64_t owner_id = 0;
  std::string owner_name;  // "" when the automation or sequence was deleted since
  int64_t step = 0;
  std::string subject;
  std::optional<std::string> message_id;
  std::string outcome;  // sent | failed
  std::optional<std::string> detail;
  int64_t at = 0;
};
// Oldest first.
Result<std::vector<RunMessage>> RunMessages(store::Conn& c, int64_t contact_id);

// An enrolment in an automation (automation_runs) or a sequence (sequence_runs).
struct Enrolment {
  int64_t id = 0;        // the run
  int64_t owner_id = 0;  // the automation or the sequence
  std::string name;
  std::string status;
  int64_t position = 0;  // automation: the next step; sequence: the next email
  std::string steps;     // automation: the steps copied at enrolment (JSON text)
  std::optional<std::string> last_error;
  int64_t enrolled_at = 0;
  int64_t updated_at = 0;
};
Result<std::vector<Enrolment>> AutomationRuns(store::Conn& c, int64_t contact_id);
Result<std::vector<Enrolment>> SequenceRuns(store::Conn& c, int64_t contact_id);

}  // namespace crmd::marketing::contact_history_repo

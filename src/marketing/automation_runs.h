#pragma once
// Automations and sequences that run (docs/marketing.md). Every piece of state is a row,
// so any node may do any part of the work and a SIGKILL loses nothing:
//  - ClaimEvents(): the outbox consumer "automations" (its own cursor in outbox_cursors).
//    Each contact event enrols the contact in every active automation whose trigger it
//    matches (a run per automation and event: enrolling twice is a no-op), and a
//    list_added event in every active sequence fed by that list.
//  - RunDue(): the due step of each due run. A step that only changes the database (wait,
//    add/remove tag or list, set status) is applied in the same transaction that advances
//    the run, so it takes effect exactly once. A step that talks to the world (send_email,
//    call_webhook) is leased to the caller; RecordStep() advances the run once the result
//    is known. A crash in between sends again after the lease with the same Message-ID /
//    webhook-id (at least once; the receiver can de-duplicate).
//  - Sequences and double opt-in confirmations: due emails leased the same way
//    (sequence_runs, optin_emails), recorded by RecordSequence()/RecordOptin().
// Thread-safe; several workers (or nodes) may run concurrently.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/crm/optin_emails_repo.h"
#include "src/marketing/automation_runs_repo.h"
#include "src/marketing/campaign_render.h"
#include "src/marketing/sequence_runs_repo.h"
#include "src/store/db.h"

namespace crmd::crm {
class ContactService;
}

namespace crmd::marketing {

inline constexpr std::string_view kAutomationConsumer = "automations";

struct RunPolicy {
  int64_t lease_s = 120;       // longer than one message's SMTP timeout or one webhook call
  int max_attempts = 6;        // temporary failures before a step counts as failed
  int64_t retry_base_s = 60;   // first retry delay; doubles per attempt
  int64_t retry_max_s = 3600;  // cap of one delay
};

// An email or webhook step leased to a worker.
struct LeasedStep {
  automation_runs_repo::Run run;  // as leased (run.due_at is the end of the lease)
  int64_t step_index = 0;
  nlohmann::json step;
};

// What became of an email or a webhook call.
struct StepOutcome {
  enum class Kind {
    kDone,          // sent, or the webhook answered 2xx
    kFailed,        // permanently refused: counted failed, the run goes on
    kTemporary,     // try again after a backoff; failed after max_attempts
    kNotAttempted,  // nothing went out (relay down, node stopping): due again at retry_at
  };
  Kind kind = Kind::kDone;
  std::string detail;
  int64_t retry_at = 0;
  // kFailed because the relay refused the address itself (5xx at RCPT): the contact
  // becomes `bounced`, which enters its address on the suppression list.
  bool recipient_rejected = false;
  // An email step's message (kDone or kFailed at the relay): its Message-ID, kept with the
  // outcome in the contact's messages (run_messages). Empty for a webhook step.
  std::string message_id;
};

// The recipient fields of a leased run or sequence row.
MailRecipient RecipientOf(const automation_runs_repo::Run& r);

class AutomationRuns {
 public:
  AutomationRuns(store::Database& db, const Clock& clock, crm::ContactService& contacts,
                 RunPolicy policy = {})
      : db_(db), clock_(clock), contacts_(contacts), policy_(policy) {}
  AutomationRuns(const AutomationRuns&) = delete;
  AutomationRuns& operator=(const AutomationRuns&) = delete;

  void set_policy(RunPolicy policy) { policy_ = policy; }
  const RunPolicy& policy() const { return policy_; }

  // Reads up to `limit` outbox events after the cursor; answers how many.
  Result<int> ClaimEvents(int limit);
  // Applies due database steps (counted in *handled) and leases up to `limit` due runs;
  // answers the email and webhook steps to perform.
  Result<std::vector<LeasedStep>> RunDue(int limit, int* handled);
  Status RecordStep(const LeasedStep& s, const StepOutcome& o);

  // Due sequence emails of active sequences, leased; a contact no longer subscribed ends
  // its enrolment here (exited), a finished one completes.
  Result<std::vector<sequence_runs_repo::DueEmail>> LeaseSequenceEmails(int limit);
  Status RecordSequence(const sequence_runs_repo::DueEmail& e, const StepOutcome& o);

  // Due double opt-in confirmation emails, leased; a contact no longer pending is skipped.
  Result<std::vector<crm::optin_emails_repo::DueOptin>> LeaseOptins(int limit);
  Status RecordOptin(const crm::optin_emails_repo::DueOptin& e, const StepOutcome& o,
                     const std::string& message_id);

 private:
  // One due run in its own transaction; a leased step when it talks to the world.
  Result<std::optional<LeasedStep>> RunOne(int64_t run_id, int* handled);
  int64_t Backoff(int64_t attempts) const;

  store::Database& db_;
  const Clock& clock_;
  crm::ContactService& contacts_;
  RunPolicy policy_;
};

}  // namespace crmd::marketing

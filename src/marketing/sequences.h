#pragma once
// Sequences: an ordered series of emails, each sent a delay after the previous one (the
// first after its delay from enrolment). Status draft | active | paused:
//   draft -> active; active -> paused; paused -> active | draft.
// Editing is allowed in draft and paused. Contacts are enrolled by update_sequence's
// enroll_contact_ids (any status) and, when list_id is set, by being added to that list
// while the sequence is active (AutomationRuns::ClaimEvents). The job loop sends each
// enrolment's emails with their delays while the sequence is active (paused holds them)
// and ends the enrolment when the contact is no longer subscribed at send time.
//
// SequenceService is thread-safe (all state is in the database).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/governance/audit.h"
#include "src/marketing/aggregate.h"
#include "src/marketing/common.h"
#include "src/store/db.h"

namespace crmd::governance {
class Idempotency;
}  // namespace crmd::governance

namespace crmd::marketing {

inline constexpr size_t kMaxSequenceEmails = 50;
inline constexpr size_t kMaxSequenceEnrol = 500;

enum class SequenceStatus { kDraft, kActive, kPaused };
const char* ToString(SequenceStatus s);
std::optional<SequenceStatus> ParseSequenceStatus(std::string_view s);
bool CanTransition(SequenceStatus from, SequenceStatus to);

struct Sequence {
  int64_t id = 0;
  std::string name, description;
  // [{subject, html_body, text_body, delay_seconds, template_id?}], validated by
  // ValidateSequenceEmails.
  nlohmann::json emails = nlohmann::json::array();
  SequenceStatus status = SequenceStatus::kDraft;
  std::optional<int64_t> list_id;       // contacts added to this list are enrolled
  std::optional<int64_t> activated_at;  // last draft -> active
  // {enrolled, sent, failed, completed, exited, active}: counters, filled by reads.
  nlohmann::json enrolments = nlohmann::json::object();
  int64_t revision = 1;
  int64_t created_at = 0, updated_at = 0;
};

nlohmann::json ToJson(const Sequence& s, bool full);
// Each email needs a subject and a body; the delay is given as delay_days or delay_seconds
// (default 0) and stored as delay_seconds. Errors name the field, e.g. "emails[1].subject".
Result<nlohmann::json> ValidateSequenceEmails(const nlohmann::json& emails);

struct SequencePage {
  std::vector<Sequence> items;
  std::optional<std::string> next_cursor;
};

class SequenceService {
 public:
  // `audit` may be empty (unit tests).
  // `idempotency` may be null (unit tests): idempotency keys are then ignored.
  SequenceService(store::Database& db, const Clock& clock, AuditSink audit = {},
                  governance::Idempotency* idempotency = nullptr);
  SequenceService(const SequenceService&) = delete;
  SequenceService& operator=(const SequenceService&) = delete;

  Result<SequencePage> List(std::optional<SequenceStatus> status, std::string_view cursor,
                            int limit) const;
  Result<Sequence> Get(int64_t id) const;
  // In its own transaction. With a non-empty idempotency_key, a repeat from the same
  // client within 24 hours returns the sequence first created (as it is now).
  Result<Sequence> Create(const governance::Actor& actor, const nlohmann::json& fields,
                          const std::string& idempotency_key = "");
  // The same in the caller's transaction, for another service composing one (the seed).
  Result<Sequence> CreateIn(store::Conn& c, const governance::Actor& actor,
                            const nlohmann::json& fields);
  // Edits need a draft or paused sequence. `fields` may also hold enroll_contact_ids (up
  // to kMaxSequenceEnrol), allowed alone in any status: each contact not yet enrolled is
  // scheduled for the first email.
  Result<Sequence> Update(const governance::Actor& actor, int64_t id, int64_t expected_revision,
                          const nlohmann::json& fields);
  // expected_revision 0 = any.
  Result<Sequence> SetStatus(const governance::Actor& actor, int64_t id, SequenceStatus to,
                             int64_t expected_revision);

 private:
  store::Database& db_;
  const Clock& clock_;
  RevisionedRows<Sequence> rows_;
};

}  // namespace crmd::marketing

#pragma once
// SQL of sequences that send (migration 0047): one enrolment per (sequence, contact) in
// sequence_runs, with the index and due time of its next email, and the counters in
// sequence_stats. Promises: Enrol is a no-op for an enrolled contact; Lease and Advance
// move a row only from the email and due time it was read at (two workers never both
// advance it). Portable SQL, bound parameters only. Stateless; any thread, own Conn.
// REQUIRES: lookups inside Database::Read or Write; every write inside Database::Write.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/crm/trace_link.h"
#include "src/store/db.h"

namespace crmd::marketing::sequence_runs_repo {

// An enrolment whose first email is due at `due_at`, counted; false when the contact is
// already enrolled or does not exist. `trace`: the trace its emails continue.
Result<bool> Enrol(store::Conn& c, int64_t sequence_id, int64_t contact_id, int64_t due_at,
                   int64_t now, const crm::TraceLink& trace = {});

// Active sequences fed by a list: (sequence id, activated_at).
Result<std::vector<std::pair<int64_t, int64_t>>> FedBy(store::Conn& c, int64_t list_id);

// A due email of an active sequence with its contact.
struct DueEmail {
  int64_t run_id = 0, sequence_id = 0, contact_id = 0;
  int64_t next_email = 0, due_at = 0, attempts = 0;
  nlohmann::json emails;  // the sequence's emails now
  std::string email, first_name, last_name, phone, custom_fields_json, contact_status;
  std::string traceparent, tracestate;  // the trace it continues; empty when none
};
// Active runs of active sequences due at `now`, oldest first, skipping rows another
// transaction holds (PostgreSQL).
Result<std::vector<DueEmail>> Due(store::Conn& c, int64_t now, int limit);
// Moves the run from (e.next_email, e.due_at) to (next_email, due_at, attempts, error,
// status); false when it was moved meanwhile.
Result<bool> Advance(store::Conn& c, const DueEmail& e, int64_t next_email, int64_t due_at,
                     int64_t attempts, const std::optional<std::string>& error,
                     const std::string& status, int64_t now);
// The sequences in which the contact has an active run.
Result<std::vector<int64_t>> ActiveSequencesOfContact(store::Conn& c, int64_t contact_id);
// The active runs of a contact about to be deleted count as exited (the rows go with the
// contact, ON DELETE CASCADE); answers how many.
Result<int64_t> ExitActiveOfContact(store::Conn& c, int64_t contact_id);

// column: enrolled | sent | failed | completed | exited.
Status Count(store::Conn& c, int64_t sequence_id, const std::string& column);

struct Stats {
  int64_t enrolled = 0, sent = 0, failed = 0, completed = 0, exited = 0;
};
Result<Stats> LoadStats(store::Conn& c, int64_t sequence_id);

// Whether every id names a contact; the first one that does not, else nullopt.
Result<std::optional<int64_t>> FirstMissingContact(store::Conn& c, const std::vector<int64_t>& ids);

}  // namespace crmd::marketing::sequence_runs_repo

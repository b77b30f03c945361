#pragma once
// SQL for human approvals (table approvals, schemas/db/*/0048_approvals.sql). Promises:
// Decide is a conditional UPDATE (pending, unexpired, the row's own subject) that succeeds
// for exactly one of any number of concurrent deciders, on both engines. Stateless; any
// thread, with its own Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::governance::approvals_repo {

struct ApprovalRow {
  std::string id;
  int64_t confirmation_id = 0;
  std::string action;
  std::string client_id;
  std::string subject;
  std::string args_hash;
  std::string revisions;  // JSON text
  std::string status;     // pending | approved | denied (not adjusted for expiry)
  std::string decided_by;
  int64_t decided_at = 0;
  int64_t created_at = 0;
  int64_t expires_at = 0;
};

// REQUIRES: inside Database::Write.
Status Insert(store::Conn& c, const ApprovalRow& row);
// REQUIRES: inside Database::Read or Write.
Result<std::optional<ApprovalRow>> Find(store::Conn& c, const std::string& id);
Result<std::optional<ApprovalRow>> FindByConfirmation(store::Conn& c, int64_t confirmation_id);
// Pending, unexpired approvals of one subject, newest first (at most `limit`).
Result<std::vector<ApprovalRow>> ListPending(store::Conn& c, const std::string& subject,
                                             int64_t now, int limit);
// Every pending, unexpired approval, newest first (at most `limit`): an administrator's list.
Result<std::vector<ApprovalRow>> ListAllPending(store::Conn& c, int64_t now, int limit);
// pending -> `status` (approved | denied) when unexpired and owned by `subject`; true for
// exactly one caller. REQUIRES: inside Database::Write.
Result<bool> Decide(store::Conn& c, const std::string& id, const std::string& subject,
                    const std::string& status, const std::string& decided_by, int64_t now);
// Housekeeping: removes approvals that expired at or before `cutoff`.
// REQUIRES: inside Database::Write.
Result<int64_t> DeleteExpiredBefore(store::Conn& c, int64_t cutoff);

}  // namespace crmd::governance::approvals_repo

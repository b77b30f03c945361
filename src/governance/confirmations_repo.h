#pragma once
// SQL for confirmation tokens (table confirmations). Tokens are stored only as
// crypto::HashSecret(token); callers pass the hash. Promises: MarkUsed is the single-use
// guarantee: a conditional UPDATE that succeeds for exactly one of any number of
// concurrent confirmers of the same row, on both engines; Approve succeeds only for a
// pending, unexpired row. Stateless; any thread, with its own Conn.
#include <cstdint>
#include <optional>
#include <string>

#include "src/core/result.h"
#include "src/governance/confirmations.h"
#include "src/store/db.h"

namespace crmd::governance::confirmations_repo {

struct NewConfirmation {
  std::string token_hash;
  std::string action;
  std::string scope;
  std::string client_id;
  std::string subject;
  std::string args;       // canonical JSON text
  std::string args_hash;  // Sha256Hex(args)
  std::string revisions;  // JSON text
  std::string preview;    // JSON text
  int64_t created_at = 0;
  int64_t expires_at = 0;
  bool requires_approval = false;  // the approval policy reserves it for the person
};

// The row as Confirm needs it.
struct StoredConfirmation {
  int64_t id = 0;
  std::string action;
  std::string scope;
  std::string client_id;
  std::string subject;
  std::string args;
  std::string args_hash;
  std::string revisions;
  std::string status;
  bool requires_approval = false;
  int64_t expires_at = 0;
  std::string preview;  // JSON text: what the caller (and the approval page) was shown
};

// Inserts a pending confirmation; answers its id. REQUIRES: inside Database::Write.
Result<int64_t> Insert(store::Conn& c, const NewConfirmation& n);
// REQUIRES: inside Database::Read or Write.
Result<std::optional<StoredConfirmation>> FindByTokenHash(store::Conn& c,
                                                          const std::string& token_hash);
// The row as stored (status not adjusted for expiry). REQUIRES: Read or Write.
Result<std::optional<ConfirmationInfo>> FindInfo(store::Conn& c, int64_t id);
// pending/approved -> superseded. REQUIRES: inside Database::Write.
Status MarkSuperseded(store::Conn& c, int64_t id);
// pending/approved -> used at `now`; true for exactly one caller per row.
// REQUIRES: inside Database::Write.
Result<bool> MarkUsed(store::Conn& c, int64_t id, int64_t now);
// Keeps the executed action's result (JSON text). REQUIRES: inside Database::Write.
Status SaveResult(store::Conn& c, int64_t id, const std::string& result_json);
// pending and expires_at > now -> approved by `approved_by`; false otherwise.
// REQUIRES: inside Database::Write.
Result<bool> Approve(store::Conn& c, int64_t id, const std::string& approved_by, int64_t now);
// pending/approved rows with expires_at <= now -> expired; answers how many.
// REQUIRES: inside Database::Write.
Result<int64_t> ExpireStale(store::Conn& c, int64_t now);

// Housekeeping: removes confirmations that expired at or before `cutoff`, whatever their
// status; answers how many. REQUIRES: inside Database::Write.
Result<int64_t> DeleteExpiredBefore(store::Conn& c, int64_t cutoff);

}  // namespace crmd::governance::confirmations_repo

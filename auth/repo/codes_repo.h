#pragma once
// The authorization-code repository (table auth_codes): codes stored as
// crypto::HashSecret of the code, bound to the client, person, redirect_uri, scope,
// resource and PKCE challenge of the request that produced them, and to the grant_id the
// token endpoint will create. The only place where auth_codes' SQL lives.
//
// Promises: single use: RedeemCode answers true once per code, even against a concurrent
// redemption on another connection or node; a code already redeemed stays findable (so a
// replay can be recognised and the grant revoked). code_hash is unique (kAlreadyExists).
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for the functions that change
// rows, and inside Database::Read or Write for FindCode.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

struct CodeRow {
  std::string code_hash;
  std::string client_id;
  int64_t user_id = 0;
  std::string redirect_uri, scope, resource, code_challenge, grant_id;
  int64_t created_at = 0;
  int64_t expires_at = 0;
  std::optional<int64_t> redeemed_at;
};

// Stores a code (redeemed_at is ignored: a new code is unredeemed).
Status InsertCode(store::Conn& c, const CodeRow& code);
Result<std::optional<CodeRow>> FindCode(store::Conn& c, const std::string& code_hash);
// Marks the code redeemed; true for the first redemption only.
Result<bool> RedeemCode(store::Conn& c, const std::string& code_hash, int64_t now);
// Deletes a client's codes not yet redeemed (optionally only those of one user).
Status DeleteUnredeemedCodes(store::Conn& c, std::string_view client_id,
                             std::optional<int64_t> user_id);
// Deletes every code of `user_id` not yet redeemed (whatever the client).
Status DeleteUnredeemedCodesOfUser(store::Conn& c, int64_t user_id);
// Deletes every code, redeemed or not, that expired at or before `cutoff` (housekeeping);
// answers how many.
Result<int64_t> DeleteCodesExpiredBy(store::Conn& c, int64_t cutoff);

}  // namespace crmd::auth::repo

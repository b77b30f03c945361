#pragma once
// The pending-authorization repository (table authorization_requests): an authorization
// request waiting for the person to sign in and decide, keyed by crypto::HashSecret of an
// opaque handle and bound to the hash of the browser cookie that started it. The only
// place where authorization_requests' SQL lives.
//
// Promises: FindPendingRequest never answers an expired request; ConsumePendingRequest
// answers 1 once per request (a double submit consumes it once); id_hash is unique
// (InsertPendingRequest answers kAlreadyExists for a duplicate).
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for the functions that change
// rows, and inside Database::Read or Write for FindPendingRequest.
#include <cstdint>
#include <optional>
#include <string>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

struct PendingRequestRow {
  std::string id_hash;
  std::string browser_hash;
  std::string csrf_hash;
  std::string client_id;
  std::string redirect_uri;
  std::string scope;
  std::string resource;
  std::optional<std::string> state;
  std::string code_challenge;
  int64_t created_at = 0;
  int64_t expires_at = 0;
};

// Deletes the requests that expired at or before `now`; answers how many.
Result<int64_t> DeleteExpiredRequests(store::Conn& c, int64_t now);
Status InsertPendingRequest(store::Conn& c, const PendingRequestRow& row);
// The request when it is still pending at `now` (id_hash, created_at and expires_at are
// not read back).
Result<std::optional<PendingRequestRow>> FindPendingRequest(store::Conn& c,
                                                            const std::string& id_hash,
                                                            int64_t now);
Status SetPendingCsrfHash(store::Conn& c, const std::string& id_hash, const std::string& csrf_hash);
// Deletes the request; answers how many rows went (0: already consumed or unknown).
Result<int64_t> ConsumePendingRequest(store::Conn& c, const std::string& id_hash);

}  // namespace crmd::auth::repo

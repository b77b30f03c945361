#pragma once
// The login-session repository (table login_sessions): browser sessions of the
// authorization pages, keyed by crypto::HashSecret of the cookie secret. The only place
// where login_sessions' SQL lives.
//
// Promises: FindLiveSession never answers a session whose expires_at has passed;
// id_hash is unique (InsertSession answers kAlreadyExists for a duplicate).
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for the functions that change
// rows, and inside Database::Read or Write for FindLiveSession.
#include <cstdint>
#include <optional>
#include <string>

#include "auth/login_session.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

// Deletes the sessions that expired at or before `now`; answers how many.
Result<int64_t> DeleteExpiredSessions(store::Conn& c, int64_t now);
Status InsertSession(store::Conn& c, const LoginSession& session);
// The session with this hash when it is still live at `now`.
Result<std::optional<LoginSession>> FindLiveSession(store::Conn& c, const std::string& id_hash,
                                                    int64_t now);
Status DeleteSession(store::Conn& c, const std::string& id_hash);
Status DeleteSessionsOf(store::Conn& c, int64_t user_id);

}  // namespace crmd::auth::repo

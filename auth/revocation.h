#pragma once
// POST /oauth/revoke (RFC 7009). The calling client authenticates (public clients by
// client_id) and may revoke only tokens issued to it. Revoking a refresh token revokes its
// whole grant (every access and refresh token); revoking an access token revokes that
// token. Unknown, invalid or foreign tokens still get 200 (RFC 7009 §2.2): the answer never
// tells whether a token existed. Thread-safe; blocks on the database.
#include "auth/token_service.h"
#include "src/core/http_types.h"

namespace crmd::auth {

http::Response HandleRevocation(TokenService& tokens, const http::Request& request);

}  // namespace crmd::auth

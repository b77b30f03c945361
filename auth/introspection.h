#pragma once
// POST /oauth/introspect (RFC 7662). Who may introspect: a confidential client that
// authenticates with its secret, and only tokens issued to itself; everything else
// (unknown, malformed, expired, revoked, another client's token) is {"active": false}.
// Public clients are refused with 401 invalid_client. Thread-safe; blocks on the database.
#include "auth/token_service.h"
#include "src/core/http_types.h"

namespace crmd::auth {

http::Response HandleIntrospection(TokenService& tokens, const http::Request& request);

}  // namespace crmd::auth

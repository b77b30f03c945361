#pragma once
// POST /oauth/token (RFC 6749 §3.2, §5; OAuth 2.1 §3.2): form-encoded request, client
// authentication, dispatch to the grant handlers, JSON answer with no-store headers.
// Thread-safe; blocks on the database.
#include "auth/client_auth.h"
#include "auth/token_errors.h"
#include "auth/token_service.h"
#include "src/core/http_types.h"

namespace crmd::auth {

http::Response HandleTokenRequest(TokenService& tokens, const http::Request& request);

// The request body as a form: POST, Content-Type application/x-www-form-urlencoded, every
// parameter at most once (RFC 6749 §3.1) except those named in `repeatable`.
OAuthResult<Form> ReadOAuthForm(const http::Request& request,
                                std::initializer_list<std::string_view> repeatable = {});

}  // namespace crmd::auth

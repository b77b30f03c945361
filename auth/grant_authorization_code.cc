// grant_type=authorization_code (RFC 6749 §4.1.3, OAuth 2.1 §4.1.3, RFC 7636 §4.6,
// RFC 8707 §2.2).
#include <spdlog/spdlog.h>

#include "auth/grant_handlers.h"
#include "auth/pkce.h"
#include "auth/repo/codes_repo.h"
#include "auth/repo/grants_repo.h"
#include "auth/scopes.h"
#include "src/core/crypto.h"

namespace crmd::auth {

namespace {

using repo::CodeRow;

GrantOutcome Refused(OAuthError e) { return {Refuse(std::move(e)), false}; }

// RFC 6749 §10.5 / OAuth 2.1 §4.1.3: a code used twice means it leaked; everything issued
// from it is revoked.
Result<GrantOutcome> Replay(store::Conn& c, const CodeRow& code, int64_t now) {
  if (auto st = repo::RevokeGrant(c, code.grant_id, now); !st) return Fail(st.error());
  return GrantOutcome{Refuse(OAuthError::InvalidGrant("authorization code already used")), true,
                      fmt::format(R"("event":"auth_code_replay","client_id":"{}","grant_id":"{}")",
                                  code.client_id, code.grant_id)};
}

}  // namespace

OAuthResult<nlohmann::json> GrantAuthorizationCode(const GrantContext& ctx) {
  auto code = http::FormValue(ctx.form, "code");
  auto redirect_uri = http::FormValue(ctx.form, "redirect_uri");
  auto verifier = http::FormValue(ctx.form, "code_verifier");
  if (!code || code->empty()) return Refuse(OAuthError::InvalidRequest("code is required"));
  if (!redirect_uri) return Refuse(OAuthError::InvalidRequest("redirect_uri is required"));
  // OAuth 2.1: PKCE is mandatory; without a verifier the code cannot be redeemed.
  if (!verifier) return Refuse(OAuthError::InvalidRequest("code_verifier is required"));
  if (!pkce::IsValidVerifier(*verifier))
    return Refuse(OAuthError::InvalidRequest("code_verifier is malformed"));

  TokenService& tokens = ctx.tokens;
  const auto& opts = tokens.options();
  return RunGrant(
      tokens, "authorization_code",
      [&](store::Conn& c, const SigningKey& key) -> Result<GrantOutcome> {
        int64_t now = tokens.clock().NowUnix();
        std::string code_hash = crypto::HashSecret(*code);
        auto found = repo::FindCode(c, code_hash);
        if (!found) return Fail(found.error());
        if (!*found) return Refused(OAuthError::InvalidGrant("invalid authorization code"));
        const CodeRow& row = **found;
        // Checked before replay handling: another client cannot burn someone else's grant.
        if (row.client_id != ctx.client.client_id)
          return Refused(OAuthError::InvalidGrant("invalid authorization code"));
        if (row.redeemed_at) return Replay(c, row, now);
        if (row.expires_at <= now)
          return Refused(OAuthError::InvalidGrant("authorization code expired"));
        if (*redirect_uri != row.redirect_uri)
          return Refused(
              OAuthError::InvalidGrant("redirect_uri does not match the authorization request"));
        if (!pkce::VerifyS256(*verifier, row.code_challenge))
          return Refused(
              OAuthError::InvalidGrant("code_verifier does not match the code_challenge"));
        if (ctx.resource && *ctx.resource != row.resource)
          return Refused(
              OAuthError::InvalidTarget("resource does not match the authorization request"));
        if (row.resource != opts.resource)
          return Refused(OAuthError::InvalidTarget("unknown resource"));
        auto scopes = ParseScope(row.scope);
        if (!scopes) return Refused(OAuthError::InvalidScope("granted scope is no longer valid"));
        // The person's role as it is now bounds the tokens (auth/roles.h).
        auto capped = CapToPerson(c, row.user_id, *scopes);
        if (!capped) return Fail(capped.error());
        if (!capped->refusal.error.empty()) return Refused(std::move(capped->refusal));
        scopes = std::move(capped->scopes);

        // Single use, even against a concurrent redemption on another connection or node.
        auto claimed = repo::RedeemCode(c, code_hash, now);
        if (!claimed) return Fail(claimed.error());
        if (!*claimed) return Replay(c, row, now);

        repo::GrantRow grant{.grant_id = row.grant_id,
                             .client_id = row.client_id,
                             .user_id = row.user_id,
                             .scope = JoinScope(*scopes),
                             .resource = row.resource};
        if (auto st = repo::InsertGrant(c, grant, now); !st) return Fail(st.error());
        auto issued =
            tokens.IssueAccessToken(c, key,
                                    {.subject = GrantSubject(grant.user_id, grant.client_id),
                                     .client_id = grant.client_id,
                                     .scopes = *scopes,
                                     .grant_id = grant.grant_id,
                                     .audience = row.resource,
                                     .ttl_seconds = std::nullopt});
        if (!issued) return Fail(issued.error());
        std::optional<std::string> refresh;
        if (ctx.client.AllowsGrant("refresh_token")) {
          auto rt = IssueRefreshToken(c, tokens.random(), grant, now, opts.refresh_token_ttl);
          if (!rt) return Fail(rt.error());
          refresh = std::move(*rt);
        }
        return GrantOutcome{TokenResponseBody(*issued, grant.scope, refresh), false};
      });
}

}  // namespace crmd::auth

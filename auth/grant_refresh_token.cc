// grant_type=refresh_token (RFC 6749 §6, OAuth 2.1 §4.3.1 and §4.3.3: rotation with reuse
// detection for public clients; crmd rotates for every client).
#include <spdlog/spdlog.h>

#include "auth/grant_handlers.h"
#include "auth/repo/tokens_repo.h"
#include "auth/scopes.h"
#include "src/core/crypto.h"

namespace crmd::auth {

OAuthResult<nlohmann::json> GrantRefreshToken(const GrantContext& ctx) {
  auto presented = http::FormValue(ctx.form, "refresh_token");
  if (!presented || presented->empty())
    return Refuse(OAuthError::InvalidRequest("refresh_token is required"));
  std::optional<std::set<std::string>> requested;
  if (auto s = http::FormValue(ctx.form, "scope")) {
    auto parsed = ParseScope(*s);
    if (!parsed) return Refuse(OAuthError::InvalidScope(parsed.error().message));
    if (!parsed->empty()) requested = std::move(*parsed);
  }

  TokenService& tokens = ctx.tokens;
  const auto& opts = tokens.options();
  return RunGrant(
      tokens, "refresh_token", [&](store::Conn& c, const SigningKey& key) -> Result<GrantOutcome> {
        auto refused = [](OAuthError e) { return GrantOutcome{Refuse(std::move(e)), false}; };
        int64_t now = tokens.clock().NowUnix();
        auto found = repo::FindRefreshToken(c, crypto::HashSecret(*presented));
        if (!found) return Fail(found.error());
        if (!*found || (*found)->client_id != ctx.client.client_id)
          return refused(OAuthError::InvalidGrant("invalid refresh token"));
        const repo::RefreshTokenRow& row = **found;
        auto reuse = [&]() -> Result<GrantOutcome> {
          if (auto st = repo::RevokeGrant(c, row.grant_id, now); !st) return Fail(st.error());
          return GrantOutcome{
              Refuse(OAuthError::InvalidGrant("refresh token already used")), true,
              fmt::format(R"("event":"refresh_token_reuse","client_id":"{}","grant_id":"{}")",
                          row.client_id, row.grant_id)};
        };
        // A rotated token presented again: someone holds a copy. Revoke the family.
        if (row.used_at) return reuse();
        if (row.grant_revoked_at) return refused(OAuthError::InvalidGrant("grant revoked"));
        if (row.expires_at <= now)
          return refused(OAuthError::InvalidGrant("refresh token expired"));
        if (ctx.resource && *ctx.resource != row.resource)
          return refused(OAuthError::InvalidTarget("resource does not match the grant"));

        auto granted = ParseScope(row.scope);
        if (!granted) return refused(OAuthError::InvalidGrant("granted scope is no longer valid"));
        std::set<std::string> scopes = requested.value_or(*granted);
        // RFC 6749 §6: the new scope MUST NOT include any scope not originally granted.
        if (!IsSubset(scopes, *granted))
          return refused(OAuthError::InvalidScope("scope exceeds the original grant"));
        // Nor beyond the person's role as it is now: a demoted person's assistant does not
        // regain what the role lost (auth/roles.h).
        auto capped = CapToPerson(c, row.user_id, scopes);
        if (!capped) return Fail(capped.error());
        if (!capped->refusal.error.empty()) return refused(std::move(capped->refusal));
        scopes = std::move(capped->scopes);

        auto used = repo::MarkRefreshTokenUsed(c, row.token_hash, now);
        if (!used) return Fail(used.error());
        if (!*used) return reuse();  // lost a race with a concurrent use of the same token

        repo::GrantRow grant{.grant_id = row.grant_id,
                             .client_id = row.client_id,
                             .user_id = row.user_id,
                             .scope = row.scope,  // the refresh token keeps the full grant
                             .resource = row.resource};
        auto issued = tokens.IssueAccessToken(c, key,
                                              {.subject = GrantSubject(row.user_id, row.client_id),
                                               .client_id = row.client_id,
                                               .scopes = scopes,
                                               .grant_id = row.grant_id,
                                               .audience = row.resource,
                                               .ttl_seconds = std::nullopt});
        if (!issued) return Fail(issued.error());
        auto next = IssueRefreshToken(c, tokens.random(), grant, now, opts.refresh_token_ttl);
        if (!next) return Fail(next.error());
        return GrantOutcome{TokenResponseBody(*issued, JoinScope(scopes), *next), false};
      });
}

}  // namespace crmd::auth

#include "auth/client_auth.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "auth/repo/clients_repo.h"
#include "src/core/crypto.h"

namespace crmd::auth {

namespace {

struct Presented {
  std::string client_id;
  std::optional<std::string> secret;
  bool basic = false;
};

OAuthResult<Presented> ReadCredentials(const http::Request& req, const Form& form) {
  Presented p;
  auto body_id = http::FormValue(form, "client_id");
  auto body_secret = http::FormValue(form, "client_secret");
  if (auto h = req.Header("Authorization")) {
    std::string_view v = *h;
    if (v.size() < 6 || !http::IEquals(v.substr(0, 6), "Basic "))
      return Refuse(OAuthError::InvalidClient("unsupported client authentication scheme", true));
    v.remove_prefix(6);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    auto raw = crypto::Base64Decode(v);
    size_t colon = raw ? raw->find(':') : std::string::npos;
    if (!raw || colon == std::string::npos)
      return Refuse(OAuthError::InvalidClient("malformed Basic credentials", true));
    // RFC 6749 §2.3.1: both parts are form-urlencoded before Base64.
    auto id = http::PercentDecode(std::string_view(*raw).substr(0, colon), true);
    auto secret = http::PercentDecode(std::string_view(*raw).substr(colon + 1), true);
    if (!id || !secret || id->empty())
      return Refuse(OAuthError::InvalidClient("malformed Basic credentials", true));
    if (body_secret)
      return Refuse(OAuthError::InvalidRequest("use exactly one client authentication method"));
    if (body_id && *body_id != *id)
      return Refuse(OAuthError::InvalidClient("client_id does not match the credentials", true));
    p.client_id = *id;
    p.secret = *secret;
    p.basic = true;
    return p;
  }
  if (!body_id || body_id->empty())
    return Refuse(OAuthError::InvalidClient("client authentication required"));
  p.client_id = *body_id;
  p.secret = body_secret;
  return p;
}

}  // namespace

bool OAuthClient::AllowsGrant(std::string_view g) const {
  return std::find(grant_types.begin(), grant_types.end(), g) != grant_types.end();
}

OAuthResult<OAuthClient> AuthenticateClient(store::Database& db, const http::Request& req,
                                            const Form& form) {
  auto presented = ReadCredentials(req, form);
  if (!presented) return Refuse(presented.error());
  const bool basic = presented->basic;

  struct Row {
    OAuthClient client;
    std::string secret_hash;
    bool revoked = false;
  };
  auto row = db.Read([&](store::Conn& c) -> Result<std::optional<Row>> {
    auto r = repo::FindClientCredentials(c, presented->client_id);
    if (!r) return Fail(r.error());
    if (!*r) return std::optional<Row>();
    const auto& x = **r;
    Row out;
    out.client.client_id = x.client_id;
    out.secret_hash = x.secret_hash.value_or("");
    out.client.has_secret = x.secret_hash && !out.secret_hash.empty();
    out.client.auth_method = x.auth_method;
    auto grants = nlohmann::json::parse(x.grant_types_json, nullptr, false);
    if (grants.is_array())
      for (const auto& g : grants)
        if (g.is_string()) out.client.grant_types.push_back(g.get<std::string>());
    out.client.allowed_scopes = x.allowed_scopes;
    out.revoked = x.revoked;
    return std::optional<Row>(std::move(out));
  });
  if (!row) {
    spdlog::error(R"("event":"client_lookup_failed","detail":"{}")", row.error().detail);
    return Refuse(OAuthError::ServerError());
  }

  auto refuse = [&] {
    return Refuse(OAuthError::InvalidClient("client authentication failed", basic));
  };
  if (presented->secret) {
    // Same hashing work whether or not the client exists or has a secret.
    static const std::string kDummy(64, '0');
    bool ok = crypto::VerifySecret(
        *presented->secret, *row && (*row)->client.has_secret ? (*row)->secret_hash : kDummy);
    if (!*row || !(*row)->client.has_secret || !ok || (*row)->revoked) return refuse();
    (*row)->client.authenticated_with_secret = true;
    return std::move((*row)->client);
  }
  if (!*row || (*row)->revoked) return refuse();
  // A confidential client must prove its secret; naming itself is not enough.
  if ((*row)->client.Confidential() || (*row)->client.auth_method != "none") return refuse();
  return std::move((*row)->client);
}

}  // namespace crmd::auth

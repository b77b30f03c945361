#include "auth/clients.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "auth/token_store.h"
#include "src/core/crypto.h"

namespace crmd::auth {
namespace {

constexpr const char* kColumns =
    "client_id, token_endpoint_auth_method, client_name, redirect_uris, grant_types, metadata, "
    "allowed_scopes, source, cimd_expires_at, revoked, created_at, updated_at, "
    "client_secret_hash, registration_access_token_hash";

std::vector<std::string> StringArray(const std::string& text) {
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& v : j)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string ToJson(const std::vector<std::string>& v) { return nlohmann::json(v).dump(); }

Client FromRow(const store::Row& r) {
  Client c;
  c.client_id = r.Str(0);
  c.token_endpoint_auth_method = r.Str(1);
  c.client_name = r.OptStr(2);
  c.redirect_uris = StringArray(r.Str(3));
  c.grant_types = StringArray(r.Str(4));
  c.metadata_json = r.Str(5);
  c.allowed_scopes = r.OptStr(6);
  c.source = r.Str(7);
  c.cimd_expires_at = r.OptInt(8);
  c.revoked = r.Int(9) != 0;
  c.created_at = r.Int(10);
  c.updated_at = r.Int(11);
  return c;
}

}  // namespace

bool Client::AllowsGrant(std::string_view grant) const {
  return std::find(grant_types.begin(), grant_types.end(), grant) != grant_types.end();
}

std::optional<std::string> Client::RegisteredScope() const {
  auto j = nlohmann::json::parse(metadata_json, nullptr, false);
  if (j.is_object() && j.contains("scope") && j["scope"].is_string()) return j["scope"].get<std::string>();
  return std::nullopt;
}

Result<std::optional<std::pair<Client, std::pair<std::string, std::string>>>>
ClientStore::FindWithHashes(std::string_view client_id) {
  using Out = std::optional<std::pair<Client, std::pair<std::string, std::string>>>;
  return db_.Read([&](store::Conn& c) -> Result<Out> {
    auto row = c.QueryOne(std::string("SELECT ") + kColumns + " FROM oauth_clients WHERE client_id = ?",
                          {std::string(client_id)});
    if (!row) return Fail(row.error());
    if (!*row) return Out();
    return Out(std::in_place, FromRow(**row), std::make_pair((*row)->Str(12), (*row)->Str(13)));
  });
}

Result<std::optional<Client>> ClientStore::Find(std::string_view client_id) {
  auto f = FindWithHashes(client_id);
  if (!f) return Fail(f.error());
  if (!*f) return std::optional<Client>();
  return std::optional<Client>((*f)->first);
}

Status ClientStore::Insert(const Client& client, std::optional<std::string> secret_hash,
                           std::optional<std::string> registration_token_hash) {
  auto r = db_.Write([&](store::Conn& c) {
    return c.Exec(
        "INSERT INTO oauth_clients (client_id, client_secret_hash, registration_access_token_hash, "
        "token_endpoint_auth_method, client_name, redirect_uris, grant_types, metadata, "
        "allowed_scopes, source, cimd_expires_at, revoked, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        {client.client_id, store::Opt(secret_hash), store::Opt(registration_token_hash),
         client.token_endpoint_auth_method, store::Opt(client.client_name), ToJson(client.redirect_uris),
         ToJson(client.grant_types), client.metadata_json, store::Opt(client.allowed_scopes),
         client.source, store::Opt(client.cimd_expires_at), int64_t{client.revoked ? 1 : 0},
         client.created_at, client.updated_at});
  });
  if (!r) return Fail(r.error());
  return Ok();
}

Status ClientStore::Update(const Client& client, std::optional<std::string> secret_hash,
                           bool clear_secret) {
  auto r = db_.Write([&](store::Conn& c) -> Result<int64_t> {
    auto n = c.Exec(
        "UPDATE oauth_clients SET token_endpoint_auth_method = ?, client_name = ?, "
        "redirect_uris = ?, grant_types = ?, metadata = ?, cimd_expires_at = ?, updated_at = ? "
        "WHERE client_id = ?",
        {client.token_endpoint_auth_method, store::Opt(client.client_name),
         ToJson(client.redirect_uris), ToJson(client.grant_types), client.metadata_json,
         store::Opt(client.cimd_expires_at), clock_.NowUnix(), client.client_id});
    if (!n) return n;
    if (*n == 0) return Fail(Errc::kNotFound, "unknown client");
    if (secret_hash || clear_secret) {
      auto s = c.Exec("UPDATE oauth_clients SET client_secret_hash = ? WHERE client_id = ?",
                      {store::Opt(secret_hash), client.client_id});
      if (!s) return s;
    }
    return n;
  });
  if (!r) return Fail(r.error());
  return Ok();
}

Status ClientStore::UpsertCimd(const Client& client) {
  auto r = db_.Write([&](store::Conn& c) {
    return c.Exec(
        "INSERT INTO oauth_clients (client_id, client_secret_hash, registration_access_token_hash, "
        "token_endpoint_auth_method, client_name, redirect_uris, grant_types, metadata, "
        "allowed_scopes, source, cimd_expires_at, revoked, created_at, updated_at) "
        "VALUES (?, NULL, NULL, ?, ?, ?, ?, ?, NULL, 'cimd', ?, 0, ?, ?) "
        "ON CONFLICT (client_id) DO UPDATE SET token_endpoint_auth_method = "
        "excluded.token_endpoint_auth_method, client_name = excluded.client_name, "
        "redirect_uris = excluded.redirect_uris, grant_types = excluded.grant_types, "
        "metadata = excluded.metadata, cimd_expires_at = excluded.cimd_expires_at, "
        "updated_at = excluded.updated_at",
        {client.client_id, client.token_endpoint_auth_method, store::Opt(client.client_name),
         ToJson(client.redirect_uris), ToJson(client.grant_types), client.metadata_json,
         store::Opt(client.cimd_expires_at), client.created_at, client.updated_at});
  });
  if (!r) return Fail(r.error());
  return Ok();
}

Status RevokeGrantsOf(store::Conn& c, std::string_view client_id, std::optional<int64_t> user_id,
                      int64_t now) {
  std::string cid(client_id);
  auto rows = user_id ? c.Query("SELECT grant_id FROM grants WHERE client_id = ? AND user_id = ?",
                                {cid, *user_id})
                      : c.Query("SELECT grant_id FROM grants WHERE client_id = ?", {cid});
  if (!rows) return Fail(rows.error());
  for (const auto& r : *rows)
    if (auto st = RevokeGrant(c, r.Str(0), now); !st) return st;
  auto codes = user_id ? c.Exec("DELETE FROM auth_codes WHERE client_id = ? AND user_id = ? AND "
                                "redeemed_at IS NULL",
                                {cid, *user_id})
                       : c.Exec("DELETE FROM auth_codes WHERE client_id = ? AND redeemed_at IS NULL", {cid});
  if (!codes) return Fail(codes.error());
  return Ok();
}

Status ClientStore::Delete(std::string_view client_id) {
  const int64_t now = clock_.NowUnix();
  auto r = db_.Write([&](store::Conn& c) -> Result<int64_t> {
    if (auto st = RevokeGrantsOf(c, client_id, std::nullopt, now); !st) return Fail(st.error());
    if (auto d = c.Exec("DELETE FROM consents WHERE client_id = ?", {std::string(client_id)}); !d) return d;
    auto n = c.Exec("DELETE FROM oauth_clients WHERE client_id = ?", {std::string(client_id)});
    if (n && *n == 0) return Fail(Errc::kNotFound, "unknown client");
    return n;
  });
  if (!r) return Fail(r.error());
  return Ok();
}

Status ClientStore::Revoke(std::string_view client_id) {
  const int64_t now = clock_.NowUnix();
  auto r = db_.Write([&](store::Conn& c) -> Result<int64_t> {
    auto n = c.Exec("UPDATE oauth_clients SET revoked = 1, updated_at = ? WHERE client_id = ?",
                    {now, std::string(client_id)});
    if (!n) return n;
    if (*n == 0) return Fail(Errc::kNotFound, "unknown client");
    if (auto st = RevokeGrantsOf(c, client_id, std::nullopt, now); !st) return Fail(st.error());
    return n;
  });
  if (!r) return Fail(r.error());
  return Ok();
}

Status ClientStore::SetAllowedScopes(std::string_view client_id, const std::string& scopes) {
  auto r = db_.Write([&](store::Conn& c) -> Result<int64_t> {
    auto n = c.Exec("UPDATE oauth_clients SET allowed_scopes = ?, updated_at = ? WHERE client_id = ?",
                    {scopes, clock_.NowUnix(), std::string(client_id)});
    if (n && *n == 0) return Fail(Errc::kNotFound, "unknown client");
    return n;
  });
  if (!r) return Fail(r.error());
  return Ok();
}

Status ClientStore::SetRegistrationTokenHash(std::string_view client_id, const std::string& token_hash) {
  auto r = db_.Write([&](store::Conn& c) -> Result<int64_t> {
    auto n = c.Exec("UPDATE oauth_clients SET registration_access_token_hash = ? WHERE client_id = ?",
                    {token_hash, std::string(client_id)});
    if (n && *n == 0) return Fail(Errc::kNotFound, "unknown client");
    return n;
  });
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::vector<Client>> ClientStore::List() {
  return db_.Read([&](store::Conn& c) -> Result<std::vector<Client>> {
    auto rows = c.Query(std::string("SELECT ") + kColumns + " FROM oauth_clients ORDER BY created_at, client_id");
    if (!rows) return Fail(rows.error());
    std::vector<Client> out;
    for (const auto& r : *rows) out.push_back(FromRow(r));
    return out;
  });
}

Result<Client> ClientStore::Authenticate(std::string_view client_id,
                                         std::optional<std::string_view> secret) {
  auto f = FindWithHashes(client_id);
  if (!f) return Fail(f.error());
  // Hash a dummy when the client is unknown so the timing does not tell.
  const std::string& stored = *f ? (*f)->second.first : std::string(64, '0');
  bool secret_ok = secret && !stored.empty() && crypto::VerifySecret(*secret, stored);
  if (!*f || (*f)->first.revoked) return Fail(Errc::kUnauthenticated, "client authentication failed");
  const Client& client = (*f)->first;
  if (client.IsPublic()) {
    if (secret && !secret->empty()) return Fail(Errc::kUnauthenticated, "client authentication failed");
    return client;
  }
  if (!secret_ok) return Fail(Errc::kUnauthenticated, "client authentication failed");
  return client;
}

Result<Client> ClientStore::AuthenticateRegistration(std::string_view client_id, std::string_view token) {
  auto f = FindWithHashes(client_id);
  if (!f) return Fail(f.error());
  const std::string& stored = *f ? (*f)->second.second : std::string(64, '0');
  bool ok = !stored.empty() && crypto::VerifySecret(token, stored);
  if (!*f || (*f)->first.revoked || !ok)
    return Fail(Errc::kUnauthenticated, "invalid registration access token");
  return (*f)->first;
}

}  // namespace crmd::auth

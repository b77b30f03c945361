#include "auth/repo/clients_repo.h"

#include <nlohmann/json.hpp>

namespace crmd::auth::repo {
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

Result<std::optional<ClientWithHashes>> FindClient(store::Conn& c, std::string_view client_id) {
  using Out = std::optional<ClientWithHashes>;
  auto row =
      c.QueryOne(std::string("SELECT ") + kColumns + " FROM oauth_clients WHERE client_id = ?",
                 {std::string(client_id)});
  if (!row) return Fail(row.error());
  if (!*row) return Out();
  return Out(ClientWithHashes{FromRow(**row), (*row)->Str(12), (*row)->Str(13)});
}

Result<std::vector<Client>> ListClients(store::Conn& c) {
  auto rows = c.Query(std::string("SELECT ") + kColumns +
                      " FROM oauth_clients ORDER BY created_at, client_id");
  if (!rows) return Fail(rows.error());
  std::vector<Client> out;
  for (const auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<std::vector<Client>> ListClientsPage(store::Conn& c,
                                            const std::optional<ClientCursor>& after,
                                            int64_t limit) {
  auto rows = after ? c.Query(std::string("SELECT ") + kColumns +
                                  " FROM oauth_clients WHERE created_at > ? OR (created_at = ? "
                                  "AND client_id > ?) ORDER BY created_at, client_id LIMIT ?",
                              {after->created_at, after->created_at, after->client_id, limit})
                    : c.Query(std::string("SELECT ") + kColumns +
                                  " FROM oauth_clients ORDER BY created_at, client_id LIMIT ?",
                              {limit});
  if (!rows) return Fail(rows.error());
  std::vector<Client> out;
  for (const auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<int64_t> DeleteUnusedClientsCreatedBy(store::Conn& c, int64_t cutoff) {
  return c.Exec(
      "DELETE FROM oauth_clients WHERE source IN ('dcr', 'cimd') AND revoked = 0 AND "
      "created_at <= ? "
      "AND NOT EXISTS (SELECT 1 FROM grants g WHERE g.client_id = oauth_clients.client_id) "
      "AND NOT EXISTS (SELECT 1 FROM consents k WHERE k.client_id = oauth_clients.client_id) "
      "AND NOT EXISTS (SELECT 1 FROM auth_codes a WHERE a.client_id = oauth_clients.client_id)",
      {cutoff});
}

Status InsertClient(store::Conn& c, const Client& client,
                    const std::optional<std::string>& secret_hash,
                    const std::optional<std::string>& registration_token_hash) {
  return Discard(c.Exec(
      "INSERT INTO oauth_clients (client_id, client_secret_hash, registration_access_token_hash, "
      "token_endpoint_auth_method, client_name, redirect_uris, grant_types, metadata, "
      "allowed_scopes, source, cimd_expires_at, revoked, created_at, updated_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {client.client_id, store::Opt(secret_hash), store::Opt(registration_token_hash),
       client.token_endpoint_auth_method, store::Opt(client.client_name),
       ToJson(client.redirect_uris), ToJson(client.grant_types), client.metadata_json,
       store::Opt(client.allowed_scopes), client.source, store::Opt(client.cimd_expires_at),
       int64_t{client.revoked ? 1 : 0}, client.created_at, client.updated_at}));
}

Result<int64_t> UpdateClientMetadata(store::Conn& c, const Client& client, int64_t now) {
  return c.Exec(
      "UPDATE oauth_clients SET token_endpoint_auth_method = ?, client_name = ?, "
      "redirect_uris = ?, grant_types = ?, metadata = ?, cimd_expires_at = ?, updated_at = ? "
      "WHERE client_id = ?",
      {client.token_endpoint_auth_method, store::Opt(client.client_name),
       ToJson(client.redirect_uris), ToJson(client.grant_types), client.metadata_json,
       store::Opt(client.cimd_expires_at), now, client.client_id});
}

Status SetClientSecretHash(store::Conn& c, std::string_view client_id,
                           const std::optional<std::string>& secret_hash) {
  return Discard(c.Exec("UPDATE oauth_clients SET client_secret_hash = ? WHERE client_id = ?",
                        {store::Opt(secret_hash), std::string(client_id)}));
}

Status UpsertCimdClient(store::Conn& c, const Client& client) {
  return Discard(c.Exec(
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
       store::Opt(client.cimd_expires_at), client.created_at, client.updated_at}));
}

Result<int64_t> DeleteClient(store::Conn& c, std::string_view client_id) {
  return c.Exec("DELETE FROM oauth_clients WHERE client_id = ?", {std::string(client_id)});
}

Result<int64_t> MarkClientRevoked(store::Conn& c, std::string_view client_id, int64_t now) {
  return c.Exec("UPDATE oauth_clients SET revoked = 1, updated_at = ? WHERE client_id = ?",
                {now, std::string(client_id)});
}

Result<int64_t> SetAllowedScopes(store::Conn& c, std::string_view client_id,
                                 const std::string& scopes, int64_t now) {
  return c.Exec("UPDATE oauth_clients SET allowed_scopes = ?, updated_at = ? WHERE client_id = ?",
                {scopes, now, std::string(client_id)});
}

Result<int64_t> SetRegistrationTokenHash(store::Conn& c, std::string_view client_id,
                                         const std::string& token_hash) {
  return c.Exec("UPDATE oauth_clients SET registration_access_token_hash = ? WHERE client_id = ?",
                {token_hash, std::string(client_id)});
}

Result<std::optional<ClientCredentialsRow>> FindClientCredentials(store::Conn& c,
                                                                  std::string_view client_id) {
  auto r = c.QueryOne(
      "SELECT client_id, client_secret_hash, token_endpoint_auth_method, grant_types, "
      "allowed_scopes, revoked FROM oauth_clients WHERE client_id = ?",
      {std::string(client_id)});
  if (!r) return Fail(r.error());
  if (!*r) return std::optional<ClientCredentialsRow>();
  const auto& x = **r;
  return std::optional<ClientCredentialsRow>(ClientCredentialsRow{.client_id = x.Str(0),
                                                                  .secret_hash = x.OptStr(1),
                                                                  .auth_method = x.Str(2),
                                                                  .grant_types_json = x.Str(3),
                                                                  .allowed_scopes = x.OptStr(4),
                                                                  .revoked = x.Int(5) != 0});
}

}  // namespace crmd::auth::repo

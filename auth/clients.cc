#include "auth/clients.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "auth/repo/clients_repo.h"
#include "auth/repo/consents_repo.h"
#include "auth/repo/grants_repo.h"
#include "src/core/crypto.h"

namespace crmd::auth {

bool Client::AllowsGrant(std::string_view grant) const {
  return std::find(grant_types.begin(), grant_types.end(), grant) != grant_types.end();
}

std::optional<std::string> Client::RegisteredScope() const {
  auto j = nlohmann::json::parse(metadata_json, nullptr, false);
  if (j.is_object() && j.contains("scope") && j["scope"].is_string())
    return j["scope"].get<std::string>();
  return std::nullopt;
}

Result<std::optional<std::pair<Client, std::pair<std::string, std::string>>>>
ClientStore::FindWithHashes(std::string_view client_id) {
  using Out = std::optional<std::pair<Client, std::pair<std::string, std::string>>>;
  return db_.Read([&](store::Conn& c) -> Result<Out> {
    auto found = repo::FindClient(c, client_id);
    if (!found) return Fail(found.error());
    if (!*found) return Out();
    return Out(std::in_place, std::move((*found)->client),
               std::make_pair(std::move((*found)->secret_hash),
                              std::move((*found)->registration_token_hash)));
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
  return db_.Write([&](store::Conn& c) {
    return repo::InsertClient(c, client, secret_hash, registration_token_hash);
  });
}

Status ClientStore::Update(const Client& client, std::optional<std::string> secret_hash,
                           bool clear_secret) {
  return db_.Write([&](store::Conn& c) -> Status {
    auto n = repo::UpdateClientMetadata(c, client, clock_.NowUnix());
    if (!n) return Fail(n.error());
    if (*n == 0) return Fail(Errc::kNotFound, "unknown client");
    if (secret_hash || clear_secret)
      return repo::SetClientSecretHash(c, client.client_id, secret_hash);
    return Ok();
  });
}

Status ClientStore::UpsertCimd(const Client& client) {
  return db_.Write([&](store::Conn& c) { return repo::UpsertCimdClient(c, client); });
}

namespace {
Status FoundOne(const Result<int64_t>& n) {
  if (!n) return Fail(n.error());
  if (*n == 0) return Fail(Errc::kNotFound, "unknown client");
  return Ok();
}
}  // namespace

Status ClientStore::Delete(std::string_view client_id) {
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Status {
    if (auto st = repo::RevokeGrantsOfClient(c, client_id, std::nullopt, now); !st) return st;
    if (auto st = repo::DeleteConsentsOfClient(c, client_id); !st) return st;
    return FoundOne(repo::DeleteClient(c, client_id));
  });
}

Status ClientStore::Revoke(std::string_view client_id) {
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Status {
    if (auto st = FoundOne(repo::MarkClientRevoked(c, client_id, now)); !st) return st;
    return repo::RevokeGrantsOfClient(c, client_id, std::nullopt, now);
  });
}

Status ClientStore::SetAllowedScopes(std::string_view client_id, const std::string& scopes) {
  return db_.Write([&](store::Conn& c) {
    return FoundOne(repo::SetAllowedScopes(c, client_id, scopes, clock_.NowUnix()));
  });
}

Status ClientStore::SetRegistrationTokenHash(std::string_view client_id,
                                             const std::string& token_hash) {
  return db_.Write([&](store::Conn& c) {
    return FoundOne(repo::SetRegistrationTokenHash(c, client_id, token_hash));
  });
}

Result<std::vector<Client>> ClientStore::List() {
  return db_.Read([&](store::Conn& c) { return repo::ListClients(c); });
}

Result<ClientStore::Page> ClientStore::ListPage(std::string_view after, int64_t limit) {
  // The cursor is "<created_at>:<client_id>" of the last client shown.
  std::optional<repo::ClientCursor> cursor;
  if (size_t colon = after.find(':'); colon != std::string_view::npos && colon > 0 && colon <= 18) {
    std::string_view digits = after.substr(0, colon);
    if (std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      cursor = repo::ClientCursor{.created_at = std::stoll(std::string(digits)),
                                  .client_id = std::string(after.substr(colon + 1))};
  }
  auto rows = db_.Read([&](store::Conn& c) { return repo::ListClientsPage(c, cursor, limit + 1); });
  if (!rows) return Fail(rows.error());
  Page page;
  page.clients = std::move(*rows);
  if (static_cast<int64_t>(page.clients.size()) > limit) {
    page.clients.resize(limit);
    const Client& last = page.clients.back();
    page.next = std::to_string(last.created_at) + ":" + last.client_id;
  }
  return page;
}

Result<Client> ClientStore::Authenticate(std::string_view client_id,
                                         std::optional<std::string_view> secret) {
  auto f = FindWithHashes(client_id);
  if (!f) return Fail(f.error());
  // Hash a dummy when the client is unknown so the timing does not tell.
  const std::string& stored = *f ? (*f)->second.first : std::string(64, '0');
  bool secret_ok = secret && !stored.empty() && crypto::VerifySecret(*secret, stored);
  if (!*f || (*f)->first.revoked)
    return Fail(Errc::kUnauthenticated, "client authentication failed");
  const Client& client = (*f)->first;
  if (client.IsPublic()) {
    if (secret && !secret->empty())
      return Fail(Errc::kUnauthenticated, "client authentication failed");
    return client;
  }
  if (!secret_ok) return Fail(Errc::kUnauthenticated, "client authentication failed");
  return client;
}

Result<Client> ClientStore::AuthenticateRegistration(std::string_view client_id,
                                                     std::string_view token) {
  auto f = FindWithHashes(client_id);
  if (!f) return Fail(f.error());
  const std::string& stored = *f ? (*f)->second.second : std::string(64, '0');
  bool ok = !stored.empty() && crypto::VerifySecret(token, stored);
  if (!*f || (*f)->first.revoked || !ok)
    return Fail(Errc::kUnauthenticated, "invalid registration access token");
  return (*f)->first;
}

}  // namespace crmd::auth

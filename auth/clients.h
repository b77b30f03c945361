#pragma once
// The OAuth client registry (table oauth_clients): clients registered dynamically
// (RFC 7591, source "dcr"), cached Client ID Metadata Documents (source "cimd") and clients
// an operator created (source "admin"). Secrets (client_secret, registration access token)
// are stored as crypto::HashSecret and compared in constant time.
//
// Thread-safe: all state is in the database.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

struct Client {
  std::string client_id;
  std::string token_endpoint_auth_method = "client_secret_basic";  // none | client_secret_*
  std::optional<std::string> client_name;
  std::vector<std::string> redirect_uris;
  std::vector<std::string> grant_types = {"authorization_code"};
  std::string metadata_json = "{}";  // the accepted metadata as registered (RFC 7591 §3.2.1)
  std::optional<std::string> allowed_scopes;  // client_credentials scopes granted by an admin
  std::string source = "dcr";                 // dcr | cimd | admin
  std::optional<int64_t> cimd_expires_at;
  bool revoked = false;
  int64_t created_at = 0;
  int64_t updated_at = 0;

  bool IsPublic() const { return token_endpoint_auth_method == "none"; }
  bool AllowsGrant(std::string_view grant) const;
  // The registered `scope` metadata (RFC 7591 §2), if the client limited itself.
  std::optional<std::string> RegisteredScope() const;
  // What the consent page shows: client_name, else the client_id.
  std::string DisplayName() const { return client_name.value_or(client_id); }
};

class ClientStore {
 public:
  ClientStore(store::Database& db, const Clock& clock) : db_(db), clock_(clock) {}
  ClientStore(const ClientStore&) = delete;
  ClientStore& operator=(const ClientStore&) = delete;

  // Any client, revoked or not; nullopt when unknown.
  Result<std::optional<Client>> Find(std::string_view client_id);
  // Inserts a new client. The hashes are crypto::HashSecret() or nullopt.
  Status Insert(const Client& client, std::optional<std::string> secret_hash,
                std::optional<std::string> registration_token_hash);
  // Replaces the metadata of an existing client (RFC 7592 update, CIMD refresh).
  // `secret_hash` replaces the stored hash when set; `clear_secret` removes it.
  Status Update(const Client& client, std::optional<std::string> secret_hash, bool clear_secret);
  // Inserts or refreshes a CIMD client (keeps `revoked` and `created_at` of an existing row).
  Status UpsertCimd(const Client& client);
  // Removes the client and revokes every grant it holds (RFC 7592 §2.3).
  Status Delete(std::string_view client_id);
  // Marks the client revoked and revokes every grant it holds.
  Status Revoke(std::string_view client_id);
  Status SetAllowedScopes(std::string_view client_id, const std::string& scopes);
  Status SetRegistrationTokenHash(std::string_view client_id, const std::string& token_hash);
  Result<std::vector<Client>> List();
  // One page of at most `limit` clients, oldest first, starting after `after` (a `next`
  // of an earlier page; "" or anything unreadable: the first page). `next` is set when
  // more clients follow.
  struct Page {
    std::vector<Client> clients;
    std::optional<std::string> next;
  };
  Result<Page> ListPage(std::string_view after, int64_t limit);

  // Client authentication at the token endpoint (RFC 6749 §2.3.1): the client when it
  // exists, is not revoked and the secret matches its stored hash (constant time).
  // Public clients (method none) authenticate with no secret. kUnauthenticated otherwise.
  Result<Client> Authenticate(std::string_view client_id, std::optional<std::string_view> secret);
  // RFC 7592 §3: the client when `token` is its registration access token.
  Result<Client> AuthenticateRegistration(std::string_view client_id, std::string_view token);

 private:
  Result<std::optional<std::pair<Client, std::pair<std::string, std::string>>>> FindWithHashes(
      std::string_view client_id);

  store::Database& db_;
  const Clock& clock_;
};

}  // namespace crmd::auth

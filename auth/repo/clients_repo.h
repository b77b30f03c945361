#pragma once
// The OAuth client repository (table oauth_clients): the only place where oauth_clients'
// SQL lives. Rows carry the registered metadata and the hashes of the client secret and
// of the RFC 7592 registration access token (crypto::HashSecret; never plaintext).
//
// Promises: a client_id is unique (InsertClient answers kAlreadyExists for a duplicate);
// UpsertCimdClient keeps `revoked`, `allowed_scopes` and `created_at` of an existing row;
// operations on a single client answer how many rows they changed (0: unknown client) and
// leave the decision to the caller.
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for the functions that change
// rows, and inside Database::Read or Write for the lookups.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/clients.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

struct ClientWithHashes {
  Client client;
  std::string secret_hash;              // "" when none
  std::string registration_token_hash;  // "" when none
};

// Any client, revoked or not, with its stored hashes; nullopt when unknown.
Result<std::optional<ClientWithHashes>> FindClient(store::Conn& c, std::string_view client_id);
// Every client, oldest first.
Result<std::vector<Client>> ListClients(store::Conn& c);
// One page of clients, oldest first: at most `limit` after the (created_at, client_id)
// position `after` (nullopt: from the start).
struct ClientCursor {
  int64_t created_at = 0;
  std::string client_id;
};
Result<std::vector<Client>> ListClientsPage(store::Conn& c,
                                            const std::optional<ClientCursor>& after,
                                            int64_t limit);
// Deletes the dynamically registered and CIMD clients created at or before `cutoff` that
// were never used: no grant, no remembered consent, no authorization code, and not
// revoked (a revoked CIMD row is what keeps its URL out). Housekeeping; answers how many.
Result<int64_t> DeleteUnusedClientsCreatedBy(store::Conn& c, int64_t cutoff);
// kAlreadyExists when the client_id is taken.
Status InsertClient(store::Conn& c, const Client& client,
                    const std::optional<std::string>& secret_hash,
                    const std::optional<std::string>& registration_token_hash);
// Replaces the registered metadata; answers rows changed (0: unknown client).
Result<int64_t> UpdateClientMetadata(store::Conn& c, const Client& client, int64_t now);
// Sets (or, with nullopt, clears) the client secret hash.
Status SetClientSecretHash(store::Conn& c, std::string_view client_id,
                           const std::optional<std::string>& secret_hash);
// Inserts a CIMD client or refreshes the metadata of an existing one.
Status UpsertCimdClient(store::Conn& c, const Client& client);
// Answers rows deleted (0: unknown client).
Result<int64_t> DeleteClient(store::Conn& c, std::string_view client_id);
// Answers rows changed (0: unknown client).
Result<int64_t> MarkClientRevoked(store::Conn& c, std::string_view client_id, int64_t now);
Result<int64_t> SetAllowedScopes(store::Conn& c, std::string_view client_id,
                                 const std::string& scopes, int64_t now);
Result<int64_t> SetRegistrationTokenHash(store::Conn& c, std::string_view client_id,
                                         const std::string& token_hash);

// What token-endpoint client authentication needs (auth/client_auth.h).
struct ClientCredentialsRow {
  std::string client_id;
  std::optional<std::string> secret_hash;  // nullopt when the column is NULL
  std::string auth_method;
  std::string grant_types_json;
  std::optional<std::string> allowed_scopes;
  bool revoked = false;
};
Result<std::optional<ClientCredentialsRow>> FindClientCredentials(store::Conn& c,
                                                                  std::string_view client_id);

}  // namespace crmd::auth::repo

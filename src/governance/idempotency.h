#pragma once
// governance::Idempotency: the one idempotency helper, shared by every face (the tools'
// idempotency_key, REST's Idempotency-Key, crmctl). A repeat of (scope, key) within 24
// hours gets the first answer instead of a second run. Keys are stored hashed
// (idempotency_repo.h); the scope names the caller and the operation, e.g.
// "oauth:<client_id>:create_contact" or "rest:api_key:7:POST /api/crm/v1/contact".
//
// Two ways in, one store:
//  - Once(): inside a service's own transaction, so the answer is kept atomically with the
//    write it describes; a concurrent repeat waits for the first transaction and sees its
//    answer. The services' creates use it (contacts, lists, tags, campaigns, automations,
//    sequences); faces pass the key to the service.
//  - Run(): around a whole request whose operation runs its own transactions (a REST
//    request, a crmctl command). The request's fingerprint must match the first one
//    (else kReused), a repeat while the first still runs on this node is kInUse, and only
//    answers the operation chooses to keep are kept, so a failure can be retried.
//
// Thread-safe. Borrows db and clock (they must outlive it).
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/store/db.h"

namespace crmd::governance {

inline constexpr int64_t kIdempotencyWindowSeconds = 24 * 3600;

// "<actor kind>:<client or subject>:<operation>": "the same client" for tools is the OAuth
// client, else the actor's own identity.
std::string IdempotencyScope(const Actor& actor, const std::string& operation);

class Idempotency {
 public:
  Idempotency(store::Database* db, const Clock* clock) : db_(db), clock_(clock) {}
  Idempotency(const Idempotency&) = delete;
  Idempotency& operator=(const Idempotency&) = delete;

  // Runs `first` once per (scope, key) inside the caller's transaction: the answer kept
  // within the window, else `first`'s answer, kept in the same transaction. An empty key
  // just runs `first`. REQUIRES: `conn` is in a write transaction.
  Result<nlohmann::json> Once(store::Conn& conn, const std::string& scope, const std::string& key,
                              const std::function<Result<nlohmann::json>()>& first);

  struct Request {
    std::string scope;
    std::string key;          // non-empty
    std::string fingerprint;  // e.g. the SHA-256 of the request body
  };
  enum class Outcome {
    kRan,       // `op` ran; `answer` is what it chose to keep (null: nothing kept)
    kReplayed,  // the first answer, in `answer`
    kReused,    // the key was first used with another fingerprint; nothing ran
    kInUse,     // the first request with this key is still running; nothing ran
  };
  struct Answer {
    Outcome outcome = Outcome::kRan;
    nlohmann::json answer;  // as kept, with a "fingerprint" member
    Status kept = Ok();     // kRan: whether keeping the answer failed (the op's work stands)
  };
  // Runs `op` unless (scope, key) already has an answer; `op` answers what to keep for a
  // replay, or nullopt to keep nothing. Errors are the store's (reading the key).
  Result<Answer> Run(const Request& request,
                     const std::function<std::optional<nlohmann::json>()>& op);

 private:
  Result<std::optional<nlohmann::json>> Find(store::Conn& conn, const std::string& scope,
                                             const std::string& key) const;
  bool Acquire(const std::string& slot);
  void Release(const std::string& slot);

  store::Database* const db_;
  const Clock* const clock_;
  std::mutex mu_;
  std::set<std::string> running_;  // Run() slots in progress on this node; guarded by mu_
};

}  // namespace crmd::governance

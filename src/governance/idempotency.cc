#include "src/governance/idempotency.h"

#include "src/core/crypto.h"
#include "src/governance/idempotency_repo.h"

namespace crmd::governance {

using nlohmann::json;

std::string IdempotencyScope(const Actor& actor, const std::string& operation) {
  const std::string& who = actor.client_id.empty() ? actor.subject : actor.client_id;
  return actor.kind + ":" + who + ":" + operation;
}

Result<std::optional<json>> Idempotency::Find(store::Conn& conn, const std::string& scope,
                                              const std::string& key) const {
  return idempotency_repo::Find(conn, scope, key, clock_->NowUnix() - kIdempotencyWindowSeconds);
}

Result<json> Idempotency::Once(store::Conn& conn, const std::string& scope, const std::string& key,
                               const std::function<Result<json>()>& first) {
  if (!key.empty()) {
    auto seen = Find(conn, scope, key);
    if (!seen) return Fail(seen.error());
    if (*seen) return std::move(**seen);
  }
  auto answer = first();
  if (!answer || key.empty()) return answer;
  if (auto st = idempotency_repo::Remember(conn, scope, key, *answer, clock_->NowUnix()); !st)
    return Fail(st.error());
  return answer;
}

bool Idempotency::Acquire(const std::string& slot) {
  std::lock_guard lock(mu_);
  return running_.insert(slot).second;
}

void Idempotency::Release(const std::string& slot) {
  std::lock_guard lock(mu_);
  running_.erase(slot);
}

Result<Idempotency::Answer> Idempotency::Run(const Request& request,
                                             const std::function<std::optional<json>()>& op) {
  auto seen_answer = [&](const json& kept) {
    if (kept.value("fingerprint", "") != request.fingerprint)
      return Answer{.outcome = Outcome::kReused, .answer = nullptr};
    return Answer{.outcome = Outcome::kReplayed, .answer = kept};
  };
  auto find = [&] {
    return db_->Read([&](store::Conn& c) { return Find(c, request.scope, request.key); });
  };
  auto found = find();
  if (!found) return Fail(found.error());
  if (*found) return seen_answer(**found);

  std::string slot = request.scope + "\n" + crypto::Sha256Hex(request.key);
  if (!Acquire(slot)) return Answer{.outcome = Outcome::kInUse, .answer = nullptr};
  struct ReleaseOnExit {
    Idempotency* self;
    const std::string& slot;
    ~ReleaseOnExit() { self->Release(slot); }
  } release{this, slot};
  // Another node may have finished it between the read above and the slot.
  found = find();
  if (!found) return Fail(found.error());
  if (*found) return seen_answer(**found);

  Answer out{.outcome = Outcome::kRan, .answer = nullptr};
  std::optional<json> keep = op();
  if (!keep) return out;
  (*keep)["fingerprint"] = request.fingerprint;
  out.kept = db_->Write([&](store::Conn& c) {
    return idempotency_repo::Remember(c, request.scope, request.key, *keep, clock_->NowUnix());
  });
  out.answer = std::move(*keep);
  return out;
}

}  // namespace crmd::governance

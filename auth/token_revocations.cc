#include "auth/token_revocations.h"

#include <spdlog/spdlog.h>

#include "auth/repo/tokens_repo.h"

namespace crmd::auth {

namespace {
// Past this age a snapshot that cannot be refreshed is no longer trusted.
constexpr auto kMaxStaleness = std::chrono::seconds(10);
}  // namespace

RevokedTokens::RevokedTokens(store::Database& db, const Clock& clock,
                             std::chrono::milliseconds refresh_every)
    : db_(db), clock_(clock), refresh_every_(refresh_every) {}

Status RevokedTokens::Refresh() {
  // Tokens that expired are refused on exp anyway; keep the set small.
  auto jtis =
      db_.Read([&](store::Conn& c) { return repo::ListRevokedJtis(c, clock_.NowUnix() - 300); });
  if (!jtis) return Fail(jtis.error());
  auto set = std::make_shared<Set>(std::make_move_iterator(jtis->begin()),
                                   std::make_move_iterator(jtis->end()));
  std::lock_guard lock(snap_mu_);
  snapshot_ = std::move(set);
  loaded_at_ = std::chrono::steady_clock::now();
  return Ok();
}

Result<bool> RevokedTokens::IsRevoked(std::string_view jti) {
  std::shared_ptr<const Set> snap;
  std::chrono::steady_clock::time_point loaded;
  {
    std::lock_guard lock(snap_mu_);
    snap = snapshot_;
    loaded = loaded_at_;
  }
  auto now = std::chrono::steady_clock::now();
  bool due = !snap || stale_.load() || now - loaded >= refresh_every_;
  if (due) {
    // Without any snapshot every caller must wait; otherwise one refreshes, the rest go on.
    std::unique_lock refresh(refresh_mu_, std::defer_lock);
    if (!snap) refresh.lock();
    else refresh.try_lock();
    if (refresh.owns_lock()) {
      bool was_stale = stale_.exchange(false);
      bool still_due;
      {
        std::lock_guard lock(snap_mu_);
        still_due = !snapshot_ || was_stale || now - loaded_at_ >= refresh_every_;
      }
      if (still_due) {
        if (auto st = Refresh(); !st) {
          if (was_stale) stale_.store(true);
          spdlog::warn(R"("event":"revocation_refresh_failed","detail":"{}")", st.error().detail);
        }
      }
      std::lock_guard lock(snap_mu_);
      snap = snapshot_;
      loaded = loaded_at_;
    }
  }
  if (!snap || std::chrono::steady_clock::now() - loaded > kMaxStaleness) {
    // The request is answered 503: say why (docs/performance.md, 2026-11-27).
    const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - loaded);
    spdlog::warn(R"("event":"revocation_snapshot_stale","has_snapshot":{},"age_ms":{})",
                 snap != nullptr, snap ? age.count() : -1);
    return Fail(Errc::kUnavailable, "token verification temporarily unavailable");
  }
  return snap->count(std::string(jti)) > 0;
}

}  // namespace crmd::auth

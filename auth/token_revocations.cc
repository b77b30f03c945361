#include "auth/token_revocations.h"

#include <spdlog/spdlog.h>

#include "auth/repo/tokens_repo.h"

namespace crmd::auth {

RevokedTokens::RevokedTokens(store::Database& db, const Clock& clock,
                             std::chrono::milliseconds refresh_every,
                             std::chrono::milliseconds max_staleness,
                             std::chrono::seconds grant_horizon)
    : db_(db),
      clock_(clock),
      refresh_every_(refresh_every),
      max_staleness_(max_staleness),
      grant_horizon_(grant_horizon) {}

Status RevokedTokens::Refresh() {
  // Tokens that expired are refused on exp anyway; keep the sets small.
  const int64_t now = clock_.NowUnix();
  auto set = std::make_shared<Set>();
  auto st = db_.Read([&](store::Conn& c) -> Status {
    auto jtis = repo::ListRevokedJtis(c, now - 300);
    if (!jtis) return Fail(jtis.error());
    auto grants = repo::ListGrantsRevokedSince(c, now - grant_horizon_.count());
    if (!grants) return Fail(grants.error());
    set->jtis.insert(std::make_move_iterator(jtis->begin()), std::make_move_iterator(jtis->end()));
    set->grants.insert(std::make_move_iterator(grants->begin()),
                       std::make_move_iterator(grants->end()));
    return Ok();
  });
  if (!st) return Fail(st.error());
  std::lock_guard lock(snap_mu_);
  snapshot_ = std::move(set);
  loaded_at_ = clock_.Monotonic();
  return Ok();
}

Result<bool> RevokedTokens::IsRevoked(std::string_view jti, std::string_view grant_id) {
  std::shared_ptr<const Set> snap;
  MonotonicTime loaded;
  {
    std::lock_guard lock(snap_mu_);
    snap = snapshot_;
    loaded = loaded_at_;
  }
  auto now = clock_.Monotonic();
  bool due = !snap || stale_.load() || now - loaded >= refresh_every_;
  if (due) {
    // Without a snapshot young enough to answer with, every caller must wait for the
    // refresh; otherwise one refreshes and the rest go on with the snapshot they have.
    std::unique_lock refresh(refresh_mu_, std::defer_lock);
    if (!snap || now - loaded > max_staleness_)
      refresh.lock();
    else
      refresh.try_lock();
    if (refresh.owns_lock()) {
      bool was_stale = stale_.exchange(false);
      bool failed_meanwhile, still_due;
      {
        std::lock_guard lock(snap_mu_);
        // A refresh that failed while this caller waited for the lock is not repeated at
        // once: during an outage the callers queued behind it do not retry one by one.
        failed_meanwhile = failed_at_ > now;
        still_due = !snapshot_ || was_stale || now - loaded_at_ >= refresh_every_;
      }
      if (failed_meanwhile) {
        if (was_stale) stale_.store(true);
      } else if (still_due) {
        if (auto st = Refresh(); !st) {
          if (was_stale) stale_.store(true);
          {
            std::lock_guard lock(snap_mu_);
            failed_at_ = clock_.Monotonic();
          }
          spdlog::warn(R"("event":"revocation_refresh_failed","detail":"{}")", st.error().detail);
        }
      }
      std::lock_guard lock(snap_mu_);
      snap = snapshot_;
      loaded = loaded_at_;
    }
  }
  const auto checked = clock_.Monotonic();
  if (!snap || checked - loaded > max_staleness_) {
    // The request is answered 503: say why (docs/performance.md), at most once
    // a second, since during an outage every request ends here.
    const int64_t at_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(checked.time_since_epoch()).count();
    int64_t last = last_warned_ms_.load(std::memory_order_relaxed);
    if (at_ms - last >= 1000 &&
        last_warned_ms_.compare_exchange_strong(last, at_ms, std::memory_order_relaxed)) {
      const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(checked - loaded);
      spdlog::warn(R"("event":"revocation_snapshot_stale","has_snapshot":{},"age_ms":{})",
                   snap != nullptr, snap ? age.count() : -1);
    }
    return Fail(Errc::kUnavailable, "token verification temporarily unavailable");
  }
  return (!snap->jtis.empty() && snap->jtis.count(std::string(jti)) > 0) ||
         (!grant_id.empty() && !snap->grants.empty() &&
          snap->grants.count(std::string(grant_id)) > 0);
}

}  // namespace crmd::auth

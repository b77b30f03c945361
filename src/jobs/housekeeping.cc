#include "src/jobs/housekeeping.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "auth/repo/authorization_requests_repo.h"
#include "auth/repo/clients_repo.h"
#include "auth/repo/codes_repo.h"
#include "auth/repo/login_sessions_repo.h"
#include "auth/repo/rate_limits_repo.h"
#include "auth/repo/sign_in_failures_repo.h"
#include "auth/repo/tokens_repo.h"
#include "src/governance/approvals_repo.h"
#include "src/governance/confirmations_repo.h"
#include "src/governance/idempotency_repo.h"
#include "src/jobs/job_leases_repo.h"
#include "src/webhooks/deliveries_repo.h"

namespace crmd::jobs {
namespace {

// Each rule deletes rows at or before a cutoff through the owning aggregate's repository;
// no table's SQL lives here.
using Rule = HousekeepingRule;

constexpr int64_t kDay = 24 * 3600;
// A registered client has this long to be used for a grant before it is purged: a person
// completes an authorization within minutes of the registration that precedes it.
constexpr int64_t kUnusedClientLifetime = kDay;

constexpr Rule kRules[] = {
    {"idempotency_keys", &governance::idempotency_repo::DeleteCreatedBefore,
     [](int64_t now, int64_t) { return now - kDay; }},
    {"rate_limits", &auth::repo::DeleteWindowsStartedBy,
     [](int64_t now, int64_t) { return now - 2 * 3600; }},
    {"sign_in_failures", &auth::repo::DeleteFailureBucketsIdleSince,
     [](int64_t now, int64_t) { return now - kDay; }},
    {"oauth_clients_unused", &auth::repo::DeleteUnusedClientsCreatedBy,
     [](int64_t now, int64_t) { return now - kUnusedClientLifetime; }},
    {"auth_codes", &auth::repo::DeleteCodesExpiredBy,
     [](int64_t now, int64_t) { return now - kDay; }},
    {"access_tokens", &auth::repo::DeleteAccessTokensExpiredBy,
     [](int64_t now, int64_t) { return now - kDay; }},
    {"refresh_tokens", &auth::repo::DeleteRefreshTokensExpiredBy,
     [](int64_t now, int64_t) { return now - kDay; }},
    {"authorization_requests", &auth::repo::DeleteExpiredRequests,
     [](int64_t now, int64_t) { return now; }},
    {"login_sessions", &auth::repo::DeleteExpiredSessions,
     [](int64_t now, int64_t) { return now; }},
    {"confirmations", &governance::confirmations_repo::DeleteExpiredBefore,
     [](int64_t now, int64_t retention) { return now - retention; }},
    {"approvals", &governance::approvals_repo::DeleteExpiredBefore,
     [](int64_t now, int64_t retention) { return now - retention; }},
    {"webhook_attempts", &webhooks::deliveries_repo::DeleteAttemptsBefore,
     [](int64_t now, int64_t retention) { return now - retention; }},
};

std::string NewNodeId() {
  std::random_device rd;
  return std::to_string(rd()) + "-" + std::to_string(rd());
}

}  // namespace

Housekeeping::Housekeeping(store::Database& db, const Clock& clock, HousekeepingOptions options)
    : db_(db), clock_(clock), options_(std::move(options)), node_id_(NewNodeId()) {}

Result<bool> Housekeeping::TakeLease() {
  const int64_t now = clock_.NowUnix();
  const int64_t until = now + std::max<int64_t>(options_.interval_s, 60) + 60;
  return db_.Write([&](store::Conn& c) {
    return job_leases_repo::TakeOrRenew(c, "housekeeping", node_id_, until, now);
  });
}

Result<int64_t> Housekeeping::RunOnce() {
  const int64_t now = clock_.NowUnix();
  const int64_t retention = options_.retention_days * kDay;
  int64_t total = 0;
  std::vector<Rule> rules(std::begin(kRules), std::end(kRules));
  rules.insert(rules.end(), options_.more_rules.begin(), options_.more_rules.end());
  for (const Rule& rule : rules) {
    const int64_t cutoff = rule.cutoff(now, retention);
    auto n = db_.Write([&](store::Conn& c) { return rule.sweep(c, cutoff); });
    if (!n) return Fail(n.error());
    if (*n > 0) spdlog::info(R"("event":"housekeeping","table":"{}","deleted":{})", rule.name, *n);
    total += *n;
  }
  return total;
}

void Housekeeping::Start() {
  if (options_.interval_s <= 0 || thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stop_) {
      if (cv_.wait_for(lock, std::chrono::seconds(options_.interval_s), [this] { return stop_; }))
        break;
      lock.unlock();
      // One node sweeps at a time: the lease holder (it renews every pass; another node
      // takes over once a lease has run out).
      auto lease = TakeLease();
      if (!lease) {
        spdlog::warn(R"("event":"housekeeping_failed","code":"{}")", ErrcCode(lease.error().code));
      } else if (*lease) {
        if (auto n = RunOnce(); !n)
          spdlog::warn(R"("event":"housekeeping_failed","code":"{}")", ErrcCode(n.error().code));
      }
      lock.lock();
    }
  });
}

void Housekeeping::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace crmd::jobs

#pragma once
// Housekeeping: a background thread that deletes rows nobody needs any more, so that the
// database does not grow without bound. Every `interval_s` it runs each retention rule in
// its own short transaction and logs what it removed:
//   idempotency_keys    older than the 24 h replay window
//   rate_limits         windows that ended over an hour ago
//   sign_in_failures    no failure for a day (and no wait left)
//   oauth_clients       registered (dynamically or by metadata document) over a day ago
//                       and never used: no grant, consent or code; never admin-made or
//                       revoked ones
//   auth_codes          expired over a day ago
//   access_tokens       expired over a day ago (revocation no longer matters)
//   refresh_tokens      expired over a day ago
//   authorization_requests, login_sessions   expired
//   confirmations       expired or finished over `retention_days` ago
//   webhook_attempts    older than `retention_days`
//   and the rules the composition root adds (HousekeepingOptions::more_rules), such as
//   mcp_sessions        idle for over two hours (src/app/mcp_sessions.h)
// The outbox and the audit log are kept (the audit log is the record; the outbox is read
// by the delivery cursor).
//
// Thread-safe: Start/Stop/RunOnce from any thread.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::jobs {

// One retention rule: `sweep` deletes the rows of `name` at or before the cutoff that
// `cutoff(now, retention_days in seconds)` answers, through that table's repository.
struct HousekeepingRule {
  const char* name;
  Result<int64_t> (*sweep)(store::Conn& c, int64_t cutoff);
  int64_t (*cutoff)(int64_t now, int64_t retention_s);
};

struct HousekeepingOptions {
  int64_t interval_s = 600;  // 0: never runs on its own
  int64_t retention_days = 30;
  std::vector<HousekeepingRule> more_rules;  // after the built-in ones, in this order
};

class Housekeeping {
 public:
  Housekeeping(store::Database& db, const Clock& clock, HousekeepingOptions options);
  ~Housekeeping() { Stop(); }
  Housekeeping(const Housekeeping&) = delete;
  Housekeeping& operator=(const Housekeeping&) = delete;

  void Start();
  void Stop();
  // One pass at the clock's current time; the number of rows deleted.
  Result<int64_t> RunOnce();
  // Takes or renews the housekeeping lease (table job_leases) for this node: true when
  // this node is the one that sweeps now. With several nodes on one database only the
  // holder runs the passes of Start().
  Result<bool> TakeLease();

 private:
  store::Database& db_;
  const Clock& clock_;
  const HousekeepingOptions options_;
  const std::string node_id_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace crmd::jobs

#pragma once
// Fixed-window rate limits kept in the database (table rate_limits), so that every node
// behind a load balancer counts against the same budget. Used for dynamic client
// registration, per IP and for all addresses together (failed sign-ins have their own
// throttle, auth/sign_in_throttle.h). Hit locks its bucket while it counts, so parallel
// hits on several nodes never count from the same value.
//
// Thread-safe (all state is in the database).
#include <cstdint>
#include <string>
#include <string_view>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

struct RateLimit {
  int64_t limit = 10;     // events allowed per window
  int64_t window_s = 60;  // window length in seconds
};

struct RateDecision {
  bool allowed = true;
  int64_t count = 0;        // events counted in the current window (after this one)
  int64_t retry_after = 0;  // seconds until the window resets, when refused
};

class RateLimiter {
 public:
  RateLimiter(store::Database& db, const Clock& clock) : db_(db), clock_(clock) {}
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Counts one event in `bucket` and answers whether it stays within the limit. An event
  // over the limit is not counted further (a flood does not extend the lockout).
  Result<RateDecision> Hit(std::string_view bucket, RateLimit limit);
  // Answers whether one more event would be allowed, without counting it.
  Result<RateDecision> Check(std::string_view bucket, RateLimit limit);
  // Forgets a bucket (e.g. after a successful login).
  Status Reset(std::string_view bucket);

 private:
  Result<RateDecision> Run(std::string_view bucket, RateLimit limit, bool count);

  store::Database& db_;
  const Clock& clock_;
};

}  // namespace crmd::auth

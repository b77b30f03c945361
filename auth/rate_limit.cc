#include "auth/rate_limit.h"

#include <algorithm>

#include "auth/repo/rate_limits_repo.h"

namespace crmd::auth {

Result<RateDecision> RateLimiter::Hit(std::string_view bucket, RateLimit limit) {
  return Run(bucket, limit, true);
}

Result<RateDecision> RateLimiter::Check(std::string_view bucket, RateLimit limit) {
  return Run(bucket, limit, false);
}

Status RateLimiter::Reset(std::string_view bucket) {
  return db_.Write([&](store::Conn& c) { return repo::DeleteBucket(c, bucket); });
}

Result<RateDecision> RateLimiter::Run(std::string_view bucket, RateLimit limit, bool count) {
  const int64_t now = clock_.NowUnix();
  auto body = [&](store::Conn& c) -> Result<RateDecision> {
    auto window = repo::CurrentWindow(c, bucket, limit.window_s, now, count);
    if (!window) return Fail(window.error());
    const int64_t start = window->start;
    int64_t n = window->count;
    RateDecision d;
    d.allowed = n < limit.limit;
    d.retry_after = d.allowed ? 0 : std::max<int64_t>(1, start + limit.window_s - now);
    if (count && d.allowed) {
      ++n;
      if (auto st = repo::StoreWindow(c, bucket, {.start = start, .count = n}); !st)
        return Fail(st.error());
    }
    d.count = n;
    return d;
  };
  if (count) return db_.Write(body);
  return db_.Read(body);
}

}  // namespace crmd::auth

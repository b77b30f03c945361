#include "auth/rate_limit.h"

namespace crmd::auth {

Result<RateDecision> RateLimiter::Hit(std::string_view bucket, RateLimit limit) {
  return Run(bucket, limit, true);
}

Result<RateDecision> RateLimiter::Check(std::string_view bucket, RateLimit limit) {
  return Run(bucket, limit, false);
}

Status RateLimiter::Reset(std::string_view bucket) {
  auto r = db_.Write([&](store::Conn& c) -> Result<int64_t> {
    return c.Exec("DELETE FROM rate_limits WHERE bucket = ?", {std::string(bucket)});
  });
  if (!r) return Fail(r.error());
  return Ok();
}

Result<RateDecision> RateLimiter::Run(std::string_view bucket, RateLimit limit, bool count) {
  const int64_t now = clock_.NowUnix();
  auto body = [&](store::Conn& c) -> Result<RateDecision> {
    auto row = c.QueryOne("SELECT window_start, count FROM rate_limits WHERE bucket = ?",
                          {std::string(bucket)});
    if (!row) return Fail(row.error());
    int64_t start = now, n = 0;
    if (*row && (*row)->Int(0) + limit.window_s > now) {
      start = (*row)->Int(0);
      n = (*row)->Int(1);
    }
    RateDecision d;
    d.allowed = n < limit.limit;
    d.retry_after = d.allowed ? 0 : std::max<int64_t>(1, start + limit.window_s - now);
    if (count && d.allowed) {
      ++n;
      auto up = c.Exec(
          "INSERT INTO rate_limits (bucket, window_start, count) VALUES (?, ?, ?) "
          "ON CONFLICT (bucket) DO UPDATE SET window_start = excluded.window_start, "
          "count = excluded.count",
          {std::string(bucket), start, n});
      if (!up) return Fail(up.error());
    }
    d.count = n;
    return d;
  };
  if (count) return db_.Write(body);
  return db_.Read(body);
}

}  // namespace crmd::auth

#include "src/mcp/rate_limiter.h"

#include <algorithm>
#include <chrono>
#include <functional>

namespace crmd::mcp {

namespace {
// A shard drops its full buckets (idle long enough to have refilled) at most this often.
constexpr double kBucketSweepEvery_s = 60;
}  // namespace

RateLimiter::RateLimiter(RateLimiterOptions options, const Clock& clock)
    : options_(options), clock_(clock) {}

bool RateLimiter::Allow(const std::string& key) {
  if (options_.per_second <= 0) return true;
  double now = std::chrono::duration<double>(clock_.Now().time_since_epoch()).count();
  Shard& s = shards_[std::hash<std::string>{}(key) % kShards];
  std::lock_guard lock(s.mu);
  if (now - s.last_sweep >= kBucketSweepEvery_s) {
    // A bucket that would be full again carries no state worth keeping.
    for (auto it = s.buckets.begin(); it != s.buckets.end();) {
      double refilled = it->second.tokens + (now - it->second.updated) * options_.per_second;
      it = refilled >= options_.burst ? s.buckets.erase(it) : std::next(it);
    }
    s.last_sweep = now;
  }
  auto [it, inserted] = s.buckets.try_emplace(key, Bucket{options_.burst, now});
  Bucket& b = it->second;
  if (!inserted) {
    b.tokens =
        std::min(options_.burst, b.tokens + std::max(0.0, now - b.updated) * options_.per_second);
    b.updated = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

}  // namespace crmd::mcp

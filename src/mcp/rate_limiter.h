#pragma once
// Per-principal token buckets for tools/call (MCP server/tools, Security: servers MUST
// rate limit tool invocations). In memory, per node: a bucket holds `burst` calls and
// refills at `per_second`; idle buckets are dropped. A refused call becomes the tool
// error `rate_limited`.
//
// Thread-safe: sharded by key, one short critical section per call.
#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "src/core/clock.h"

namespace crmd::mcp {

struct RateLimiterOptions {
  double per_second = 100;  // sustained calls per second per principal; <= 0 disables
  double burst = 1000;      // calls allowed at once
};

class RateLimiter {
 public:
  // `clock` must outlive the limiter.
  RateLimiter(RateLimiterOptions options, const Clock& clock);
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Takes one token from `key`'s bucket; false when it is empty.
  bool Allow(const std::string& key);

 private:
  struct Bucket {
    double tokens = 0;
    double updated = 0;  // seconds
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, Bucket> buckets;
    double last_sweep = 0;
  };
  static constexpr size_t kShards = 16;

  const RateLimiterOptions options_;
  const Clock& clock_;
  std::array<Shard, kShards> shards_;
};

}  // namespace crmd::mcp

#pragma once
// A per-key request limit for the public REST routes (form submissions per IP and form,
// incoming webhooks per IP): fixed one-minute windows, in memory on this node (with
// several nodes each allows the limit; the database-backed limit comes with the
// PostgreSQL issue). Thread-safe.
#include <cstdint>
#include <iterator>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "src/core/clock.h"

namespace crmd::rest {

class IpLimiter {
 public:
  // per_minute <= 0: no limit.
  IpLimiter(int per_minute, const Clock& clock) : per_minute_(per_minute), clock_(clock) {}
  IpLimiter(const IpLimiter&) = delete;
  IpLimiter& operator=(const IpLimiter&) = delete;

  // Counts one request for `key`: 0 when allowed, else the seconds until its window resets
  // (for Retry-After).
  int Hit(const std::string& key) {
    if (per_minute_ <= 0) return 0;
    int64_t now = clock_.NowUnix();
    int64_t window = now / 60;
    std::lock_guard lock(mu_);
    if (counts_.size() > 100000) {  // bounded memory under a spray of addresses
      for (auto it = counts_.begin(); it != counts_.end();)
        it = it->second.first != window ? counts_.erase(it) : std::next(it);
    }
    auto& [w, n] = counts_[key];
    if (w != window) w = window, n = 0;
    if (n >= per_minute_) return static_cast<int>(60 - now % 60);
    ++n;
    return 0;
  }

 private:
  const int per_minute_;
  const Clock& clock_;
  std::mutex mu_;
  std::unordered_map<std::string, std::pair<int64_t, int>> counts_;
};

}  // namespace crmd::rest

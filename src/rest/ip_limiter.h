#pragma once
// A per-key request limit for the public REST routes (form submissions per IP and form,
// incoming webhooks per IP), in memory on this node (with several nodes each allows the
// limit). No key gets more than the limit within any 60 seconds: requests are counted in
// 5-second slots and a slot is forgotten only once all of it is more than 60 s old (so a
// request counts for 60 to 65 s). Fixed one-minute windows would let a client send twice
// the limit around a minute's boundary. Memory: 13 counters per key, at most kMaxKeys keys.
// Thread-safe.
#include <array>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <string>
#include <unordered_map>

#include "src/core/clock.h"

namespace crmd::rest {

class IpLimiter {
 public:
  static constexpr int64_t kSlotSeconds = 5;
  static constexpr int kSlots = 13;  // 60 s / 5 s, and the slot now under way
  static constexpr size_t kMaxKeys = 100000;

  // per_minute <= 0: no limit.
  IpLimiter(int per_minute, const Clock& clock) : per_minute_(per_minute), clock_(clock) {}
  IpLimiter(const IpLimiter&) = delete;
  IpLimiter& operator=(const IpLimiter&) = delete;

  // Counts one request for `key`: 0 when allowed, else the seconds (1..65) until a request
  // would be allowed if no other came (for Retry-After). A refused request is not counted.
  int Hit(const std::string& key) {
    if (per_minute_ <= 0) return 0;
    const int64_t now = clock_.NowUnix();
    const int64_t slot = now / kSlotSeconds;
    std::lock_guard lock(mu_);
    if (counts_.size() >= kMaxKeys) {
      // Bounded memory under a spray of addresses: at most one sweep per slot drops the
      // keys with nothing in the last 60 s; when that is not enough, every count is dropped
      // (a spray that large is forgotten rather than let grow).
      if (purged_slot_ != slot) {
        purged_slot_ = slot;
        for (auto it = counts_.begin(); it != counts_.end();)
          it = it->second.slot <= slot - kSlots ? counts_.erase(it) : std::next(it);
      }
      if (counts_.size() >= kMaxKeys) counts_.clear();
    }
    Window& w = counts_[key];
    // Forget the slots that are more than 60 s old (all of them after a long pause).
    for (int64_t s = w.slot + 1; s <= slot && s <= w.slot + kSlots; ++s) w.hits[s % kSlots] = 0;
    if (slot > w.slot) w.slot = slot;
    int64_t total = 0;
    for (int32_t n : w.hits) total += n;
    if (total < per_minute_) {
      ++w.hits[slot % kSlots];
      return 0;
    }
    // The oldest slots fall away one by one, at (their slot + kSlots) * kSlotSeconds.
    for (int64_t s = slot - kSlots + 1; s <= slot; ++s) {
      total -= w.hits[s % kSlots];
      if (total < per_minute_) return static_cast<int>((s + kSlots) * kSlotSeconds - now);
    }
    return static_cast<int>(kSlots * kSlotSeconds);  // not reached: total is 0 by then
  }

 private:
  struct Window {
    int64_t slot = 0;  // the newest slot counted
    std::array<int32_t, kSlots> hits{};
  };
  const int per_minute_;
  const Clock& clock_;
  std::mutex mu_;
  std::unordered_map<std::string, Window> counts_;
  int64_t purged_slot_ = -1;
};

}  // namespace crmd::rest

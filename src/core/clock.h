#pragma once
// Time is injected. Production uses SystemClock; tests use FakeClock.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace crmd {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point Now() const = 0;
  // Seconds since the Unix epoch.
  int64_t NowUnix() const {
    return std::chrono::duration_cast<std::chrono::seconds>(Now().time_since_epoch()).count();
  }
};

class SystemClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::now();
  }
};

// Thread-safe settable clock for tests.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t unix_seconds = 1'760'000'000) : now_(unix_seconds) {}
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::time_point(std::chrono::seconds(now_.load()));
  }
  void Set(int64_t unix_seconds) { now_ = unix_seconds; }
  void Advance(int64_t seconds) { now_ += seconds; }

 private:
  std::atomic<int64_t> now_;
};

// RFC 3339 UTC with seconds, e.g. "2026-11-22T16:47:13Z".
std::string FormatRfc3339(int64_t unix_seconds);

// RFC 5322 §3.3 date-time in UTC, e.g. "Sun, 06 Nov 1994 08:49:37 GMT" with zone "GMT"
// (RFC 9110 §5.6.7 IMF-fixdate, HTTP's Date) or "... +0000" (a mail's Date header).
std::string FormatImfDate(int64_t unix_seconds, std::string_view zone);

}  // namespace crmd

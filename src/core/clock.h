#pragma once
// Time is injected: wall and monotonic time come from a Clock handed to whatever needs
// them, so that tests move time instead of sleeping. Production uses SystemClock; tests
// use FakeClock (tests/support/fake_clock.h). Only src/core and the HTTP transport's timers
// read the real clocks; a duration measured for metrics or logs comes from a Stopwatch.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace crmd {

// A reading of the monotonic clock: only the difference between two readings means
// anything.
using MonotonicTime = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point Now() const = 0;
  // Never goes back, whatever happens to the wall time: for intervals, cache ages, rates.
  virtual MonotonicTime Monotonic() const = 0;
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
  MonotonicTime Monotonic() const override { return std::chrono::steady_clock::now(); }
};

// The time since construction on the real monotonic clock: for a duration in a metric or a
// log line, and for a wait bounded in real time that no test moves (the SQLite group
// commit's gathering of writers). Behaviour that tests drive reads a Clock instead.
class Stopwatch {
 public:
  Stopwatch() : started_(std::chrono::steady_clock::now()) {}
  std::chrono::nanoseconds Elapsed() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                started_);
  }
  int64_t ElapsedMicros() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(Elapsed()).count();
  }
  int64_t ElapsedMillis() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Elapsed()).count();
  }

 private:
  MonotonicTime started_;
};

// RFC 3339 UTC with seconds, e.g. "2026-11-22T16:47:13Z".
std::string FormatRfc3339(int64_t unix_seconds);

// RFC 5322 §3.3 date-time in UTC, e.g. "Sun, 06 Nov 1994 08:49:37 GMT" with zone "GMT"
// (RFC 9110 §5.6.7 IMF-fixdate, HTTP's Date) or "... +0000" (a mail's Date header).
std::string FormatImfDate(int64_t unix_seconds, std::string_view zone);

}  // namespace crmd

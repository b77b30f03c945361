#pragma once
// A settable Clock for tests (src/core/clock.h): time moves only when the test moves it.
// The monotonic reading moves together with the wall time (Advance), and never back: Set()
// to an earlier wall time leaves it where it is. Thread-safe.
#include <atomic>
#include <chrono>
#include <cstdint>

#include "src/core/clock.h"

namespace crmd {

class FakeClock final : public Clock {
 public:
  // The monotonic reading starts as far from its origin as the wall time from the epoch,
  // so that an unset time point of a class under test reads as long ago, as it does on a
  // machine that has been up for a while.
  explicit FakeClock(int64_t unix_seconds = 1'760'000'000)
      : wall_ns_(Nanos(std::chrono::seconds(unix_seconds))),
        monotonic_ns_(Nanos(std::chrono::seconds(unix_seconds))) {}

  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(wall_ns_.load())));
  }
  MonotonicTime Monotonic() const override {
    return MonotonicTime(std::chrono::duration_cast<MonotonicTime::duration>(
        std::chrono::nanoseconds(monotonic_ns_.load())));
  }

  // The wall time; the monotonic time moves forward by as much when it moves forward.
  void Set(int64_t unix_seconds) {
    const int64_t to = Nanos(std::chrono::seconds(unix_seconds));
    const int64_t from = wall_ns_.exchange(to);
    if (to > from) monotonic_ns_ += to - from;
  }
  // Both readings move forward by `seconds` (or back, for the wall time only, when it is
  // negative).
  void Advance(int64_t seconds) { Advance(std::chrono::seconds(seconds)); }
  void Advance(std::chrono::nanoseconds by) {
    wall_ns_ += by.count();
    if (by.count() > 0) monotonic_ns_ += by.count();
  }

 private:
  static int64_t Nanos(std::chrono::nanoseconds d) { return d.count(); }

  std::atomic<int64_t> wall_ns_;
  std::atomic<int64_t> monotonic_ns_;
};

}  // namespace crmd

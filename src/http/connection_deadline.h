#pragma once
// A connection's deadline (src/http/server.cc): one timer per connection instead of one
// armed and cancelled around every read and write. Asio only; for src/http alone.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace crmd::http {

// A connection's deadline for what it waits on next (a request, the rest of one, the write
// of an answer), with one timer that wakes when the deadline it was armed for has come. A
// later deadline set meanwhile costs a clock read: the timer, when it wakes, arms itself
// again for it; only an earlier one re-arms it at once. Beast's tcp_stream timeout armed
// and cancelled a timer around every read and write (timer queue work, and a
// timerfd_settime call every ninth request). When the deadline passes, `expire` runs (it
// cancels the connection's pending operations, which end with operation_aborted); a
// deadline that passes while nothing is pending (a handler running) cancels nothing, and
// the next Set() arms the timer again.
// Runs on the connection's executor only; the timer's handler holds the state, so it may
// outlive the coroutine frame (it then does nothing).
class ConnectionDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  ConnectionDeadline(const boost::asio::any_io_executor& executor, std::function<void()> expire)
      : state_(std::make_shared<State>(executor, std::move(expire))) {}
  ~ConnectionDeadline() {
    state_->closed = true;
    state_->timer.cancel();
  }
  ConnectionDeadline(const ConnectionDeadline&) = delete;
  ConnectionDeadline& operator=(const ConnectionDeadline&) = delete;

  void Set(Clock::duration after) {
    const Clock::time_point at = Clock::now() + after;
    state_->deadline = at;
    if (!state_->armed || at < state_->armed_for) Arm(state_, at);
  }

 private:
  struct State {
    State(const boost::asio::any_io_executor& executor, std::function<void()> e)
        : timer(executor), expire(std::move(e)) {}
    boost::asio::steady_timer timer;
    std::function<void()> expire;
    Clock::time_point deadline{};
    Clock::time_point armed_for{};
    uint64_t generation = 0;  // of the wait that counts (an earlier one was replaced)
    bool armed = false;
    bool closed = false;
  };
  static void Arm(const std::shared_ptr<State>& state, Clock::time_point at) {
    state->armed = true;
    state->armed_for = at;
    const uint64_t generation = ++state->generation;
    state->timer.expires_at(at);  // a pending wait ends, aborted, as a stale generation
    state->timer.async_wait([state, generation](const boost::system::error_code&) {
      if (state->closed || generation != state->generation) return;
      state->armed = false;
      if (Clock::now() >= state->deadline) {
        state->expire();
        return;
      }
      Arm(state, state->deadline);
    });
  }
  std::shared_ptr<State> state_;
};

}  // namespace crmd::http

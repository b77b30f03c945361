#pragma once
// Waiting in tests for something another thread or process does: polls `pred` every 50 ms
// for at most `seconds`; true as soon as it holds, otherwise what a last look says.
#include <chrono>
#include <thread>

namespace crmd::testing {

template <typename Pred>
bool WaitUntil(Pred pred, int seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

}  // namespace crmd::testing

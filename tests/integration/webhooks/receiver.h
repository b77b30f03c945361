#pragma once
// A tiny webhook receiver on loopback for the tests: crmd's own http::Server with a handler
// that records every request and answers `status()` (settable, e.g. 503 while "down"),
// after `delay_ms()` (settable, to keep deliveries in flight). Given a port, it listens on
// that one (a receiver that "comes back" after refusing connections).
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/http/server.h"
#include "tests/support/wait.h"

namespace crmd::webhooktest {

// A receiver sees a request before crmd has read the answer and recorded the delivery, so
// tests wait (WaitUntil) for the delivery log too.
using crmd::testing::WaitUntil;

class Receiver {
 public:
  explicit Receiver(uint16_t listen_port = 0) {
    server_ = std::make_unique<http::Server>(
        http::ServerOptions{.address = "127.0.0.1", .port = listen_port, .access_log = false},
        [this](const http::Request& req) {
          {
            std::lock_guard lock(mu_);
            requests_.push_back(req);
          }
          if (int d = delay_ms_.load(); d > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(d));
          return http::Response::Empty(status_.load());
        });
    auto port = server_->Start();
    port_ = port ? *port : 0;
  }
  ~Receiver() { server_->Stop(); }

  uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  void set_status(int s) { status_ = s; }
  void set_delay_ms(int d) { delay_ms_ = d; }
  std::vector<http::Request> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // Waits (bounded) until `pred(requests())` holds.
  template <typename Pred>
  bool WaitFor(Pred pred, int seconds = 30) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (pred(requests())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return pred(requests());
  }

 private:
  std::unique_ptr<http::Server> server_;
  uint16_t port_ = 0;
  std::atomic<int> status_{200};
  std::atomic<int> delay_ms_{0};
  std::mutex mu_;
  std::vector<http::Request> requests_;
};

}  // namespace crmd::webhooktest

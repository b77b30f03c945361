#pragma once
// The outgoing-webhook delivery worker: one background thread owned by the app (started in
// App::Start, stopped in App::Stop). Each round it claims new outbox events into delivery
// rows, leases the due deliveries, POSTs each signed payload and records the outcome.
// It keeps no state of its own: everything is in the database (deliveries.h), so a crash
// or restart loses nothing.
// Thread-safe: Start/Stop/RunOnce may be called from any thread.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "src/core/clock.h"
#include "src/core/http_client.h"
#include "src/core/metrics.h"
#include "src/core/trace.h"
#include "src/webhooks/deliveries.h"

namespace crmd::webhooks {

struct WorkerOptions {
  int poll_interval_ms = 1000;
  int timeout_ms = 15000;
  bool allow_private = false;  // allow_private_network_targets
  int batch = 20;
  // crmd_webhook_attempts_total{outcome} (GET /metrics); null: not counted.
  metrics::Registry* metrics = nullptr;
};

class DeliveryWorker {
 public:
  DeliveryWorker(Deliveries& deliveries, http::HttpClient& client, const Clock& clock,
                 WorkerOptions options)
      : deliveries_(deliveries), client_(client), clock_(clock), options_(options) {}
  ~DeliveryWorker() { Stop(); }
  DeliveryWorker(const DeliveryWorker&) = delete;
  DeliveryWorker& operator=(const DeliveryWorker&) = delete;

  void Start();
  void Stop();  // waits for the attempt in flight (bounded by timeout_ms)
  // One round (claim, lease, send, record); returns how many attempts were made.
  int RunOnce();

 private:
  Outcome Send(const Work& work, const trace::Context& trace);
  void Loop();

  Deliveries& deliveries_;
  http::HttpClient& client_;
  const Clock& clock_;
  const WorkerOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace crmd::webhooks

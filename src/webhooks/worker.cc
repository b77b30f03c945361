#include "src/webhooks/worker.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "src/core/clock.h"
#include "src/core/log.h"
#include "src/webhooks/signing.h"

namespace crmd::webhooks {

void DeliveryWorker::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void DeliveryWorker::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void DeliveryWorker::Loop() {
  while (true) {
    int sent = RunOnce();
    std::unique_lock lock(mu_);
    if (stop_) return;
    if (sent > 0) continue;  // more may be due right away
    cv_.wait_for(lock, std::chrono::milliseconds(options_.poll_interval_ms),
                 [this] { return stop_; });
    if (stop_) return;
  }
}

int DeliveryWorker::RunOnce() {
  for (int i = 0; i < 50; ++i) {
    auto claimed = deliveries_.ClaimEvents();
    if (!claimed) {
      spdlog::warn(R"("event":"webhook_claim_failed","detail":"{}")",
                   JsonEscape(claimed.error().detail.empty() ? claimed.error().message
                                                             : claimed.error().detail));
      break;
    }
    if (*claimed == 0) break;
  }
  auto due = deliveries_.LeaseDue(options_.batch);
  if (!due) {
    spdlog::warn(R"("event":"webhook_lease_failed","detail":"{}")", JsonEscape(due.error().detail));
    return 0;
  }
  int n = 0;
  for (const auto& work : *due) {
    {
      std::lock_guard lock(mu_);
      if (stop_) break;  // unsent leases simply expire and are retried
    }
    // The attempt is a child span of the request that caused the event: its log lines and
    // its traceparent header carry that request's trace id.
    LogScope scope(
        LogContext{.trace = trace::Continue(work.traceparent.empty()
                                                ? std::nullopt
                                                : std::optional<std::string_view>(work.traceparent),
                                            work.tracestate)});
    Outcome outcome = Send(work, scope.context().trace);
    if (options_.metrics) {
      const char* result = outcome.Succeeded()   ? "succeeded"
                           : outcome.status_code ? "http_error"
                                                 : "transport_error";
      options_.metrics
          ->Counter("crmd_webhook_attempts_total", "Outgoing webhook delivery attempts by outcome.",
                    {{"outcome", result}})
          .Inc();
    }
    if (auto st = deliveries_.RecordAttempt(work, outcome); !st)
      spdlog::warn(R"("event":"webhook_record_failed","delivery_id":{},"detail":"{}")",
                   work.delivery_id, JsonEscape(st.error().detail));
    ++n;
  }
  return n;
}

Outcome DeliveryWorker::Send(const Work& work, const trace::Context& trace) {
  Outcome out;
  const int64_t ts = clock_.NowUnix();
  auto signature = Sign(work.secret, work.msg_id, ts, work.payload);
  if (!signature) {
    out.error = "invalid signing secret";
    return out;
  }
  http::ClientRequest req{.method = "POST",
                          .url = work.url,
                          .headers = {{"Content-Type", "application/json"},
                                      {"User-Agent", "crmd-webhooks/1"},
                                      {"webhook-id", work.msg_id},
                                      {"webhook-timestamp", std::to_string(ts)},
                                      {"webhook-signature", *signature},
                                      {"traceparent", trace.Traceparent()}},
                          .body = work.payload,
                          .timeout_ms = options_.timeout_ms,
                          .max_response_bytes = 64 * 1024,
                          .allow_private = options_.allow_private};
  if (!trace.tracestate.empty()) req.headers.emplace_back("tracestate", trace.tracestate);
  const Stopwatch start;
  auto res = client_.Send(req);
  out.duration_ms = start.ElapsedMillis();
  if (!res) {
    out.error = res.error().message;
    spdlog::warn(
        R"("event":"webhook_attempt_error","delivery_id":{},"endpoint_id":{},"event_id":{},"attempt":{},"error":"{}","ms":{})",
        work.delivery_id, work.endpoint_id, work.event_id, work.attempt, JsonEscape(out.error),
        out.duration_ms);
    return out;
  }
  out.status_code = res->status;
  if (auto ra = res->Header("Retry-After")) {
    try {
      out.retry_after_s = std::stoll(std::string(*ra));
    } catch (...) {
      out.retry_after_s = 0;  // HTTP-date form: ignored, the backoff applies
    }
  }
  spdlog::info(
      R"("event":"webhook_attempt","delivery_id":{},"endpoint_id":{},"event_id":{},"attempt":{},"status":{},"ms":{})",
      work.delivery_id, work.endpoint_id, work.event_id, work.attempt, res->status,
      out.duration_ms);
  return out;
}

}  // namespace crmd::webhooks

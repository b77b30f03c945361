#include "src/jobs/mail_runtime.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace crmd::jobs {

Result<std::unique_ptr<MailRuntime>> MailRuntime::Create(MailRuntimeOptions options,
                                                         const Clock& clock) {
  if (!options.smtp_url.empty() && options.smtp_url.rfind("smtp://", 0) != 0 &&
      options.smtp_url.rfind("smtps://", 0) != 0) {
    return Fail(Errc::kInvalidArgument, "smtp_url must start with smtp:// or smtps://");
  }
  std::unique_ptr<MailRuntime> rt(new MailRuntime(std::move(options), clock));
  if (rt->options_.dkim) {
    auto signer = mail::DkimSigner::Load(*rt->options_.dkim);
    if (!signer) {
      return Fail(Errc::kInvalidArgument, "DKIM: " + signer.error().message);
    }
    rt->dkim_.emplace(std::move(*signer));
  }
  return rt;
}

std::unique_ptr<mail::Transport> MailRuntime::NewTransport() const {
  if (options_.smtp_url.empty()) {
    return std::make_unique<mail::FileTransport>(
        mail::FileTransportOptions{.directory = options_.mail_dir});
  }
  return std::make_unique<mail::SmtpTransport>(mail::SmtpOptions{.url = options_.smtp_url});
}

Result<std::string> MailRuntime::Render(const mail::Message& m) const {
  auto bytes = mail::RenderMessage(m, clock_);
  if (!bytes) return bytes;
  if (!dkim_) return bytes;
  return dkim_->Sign(*bytes);
}

bool MailRuntime::Throttle(const bool& stop, std::mutex& mu, std::condition_variable& cv) {
  const double rate = options_.rate_per_second;
  if (rate <= 0) return true;
  const double burst = std::max(1.0, rate / 10);  // at most a tenth of a second at once
  while (true) {
    MonotonicTime::duration wait{};
    {
      std::lock_guard lock(mu_);
      auto now = clock_.Monotonic();
      tokens_ =
          std::min(burst, tokens_ + std::chrono::duration<double>(now - refilled_).count() * rate);
      refilled_ = now;
      if (tokens_ >= 1) {
        tokens_ -= 1;
        return true;
      }
      // At most a second before looking again: a turn may be given back (ReturnTurn).
      wait = std::chrono::duration_cast<MonotonicTime::duration>(
          std::chrono::duration<double>(std::min(1.0, (1 - tokens_) / rate)));
    }
    std::unique_lock lock(mu);
    if (cv.wait_for(lock, wait, [&] { return stop; })) return false;
  }
}

void MailRuntime::ReturnTurn() {
  const double rate = options_.rate_per_second;
  if (rate <= 0) return;
  std::lock_guard lock(mu_);
  tokens_ = std::min(std::max(1.0, rate / 10), tokens_ + 1);
}

int MailRuntime::LeaseBatch(int batch, int64_t lease_s) const {
  const double rate = options_.rate_per_second;
  if (rate <= 0) return batch;
  return static_cast<int>(std::clamp(rate * static_cast<double>(lease_s) / 2, 1.0,
                                     static_cast<double>(std::max(1, batch))));
}

bool MailRuntime::MayStart(int64_t lease_until, int64_t lease_s) const {
  return clock_.NowUnix() < lease_until - lease_s / 2;
}

int64_t MailRuntime::RelayDown() {
  std::lock_guard lock(mu_);
  backoff_s_ = backoff_s_ == 0 ? 1 : std::min(backoff_s_ * 2, options_.relay_backoff_max_s);
  paused_until_ = std::max(paused_until_, clock_.NowUnix() + backoff_s_);
  spdlog::warn(R"("event":"mail_relay_down","pause_s":{})", backoff_s_);
  return paused_until_;
}

void MailRuntime::RelayUp() {
  std::lock_guard lock(mu_);
  if (backoff_s_ != 0) spdlog::info(R"("event":"mail_relay_up")");
  backoff_s_ = 0;
  paused_until_ = 0;
}

int64_t MailRuntime::PausedUntil() const {
  std::lock_guard lock(mu_);
  return paused_until_ > clock_.NowUnix() ? paused_until_ : 0;
}

}  // namespace crmd::jobs

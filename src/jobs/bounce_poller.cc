#include "src/jobs/bounce_poller.h"

#include <spdlog/spdlog.h>

#include <random>

#include "src/core/log.h"
#include "src/jobs/job_leases_repo.h"
#include "src/mail/mailbox_client.h"

namespace crmd::jobs {
namespace {

std::string PollerNodeId() {
  std::random_device rd;
  return std::to_string(rd()) + "-" + std::to_string(rd());
}

}  // namespace

BouncePoller::BouncePoller(store::Database& db, marketing::BounceMailbox& mailbox,
                           const Clock& clock, BouncePollerOptions options)
    : db_(db),
      mailbox_(mailbox),
      clock_(clock),
      options_(std::move(options)),
      node_id_(PollerNodeId()) {}

void BouncePoller::Count(const char* name, const char* outcome) {
  if (!options_.metrics) return;
  const bool mails = std::string_view(name) == "mails";
  options_.metrics
      ->Counter(mails ? "crmd_bounce_mailbox_mails_total" : "crmd_bounce_mailbox_polls_total",
                mails ? "Mails read from the bounce mailbox, by what became of them"
                      : "Polls of the bounce mailbox, by outcome",
                {{"outcome", outcome}})
      .Inc();
}

Result<bool> BouncePoller::TakeLease() {
  const int64_t now = clock_.NowUnix();
  // Held across a poll and renewed at the next one; a node that stops lets it run out.
  const int64_t until = now + options_.poll_seconds + 300;
  return db_.Write([&](store::Conn& c) {
    return job_leases_repo::TakeOrRenew(c, "bounce_mailbox", node_id_, until, now);
  });
}

Result<PollCounts> BouncePoller::RunOnce() {
  PollCounts counts;
  auto lease = TakeLease();
  if (!lease) return Fail(lease.error());
  if (!*lease) return counts;
  mail::MailboxClient box({.url = options_.mailbox_url});
  auto ids = box.List();
  if (!ids) {
    Count("polls", "unavailable");
    return Fail(ids.error());
  }
  for (const auto& id : *ids) {
    auto raw = box.Fetch(id);
    Result<marketing::MailboxOutcome> outcome =
        raw ? mailbox_.Process(*raw, "bounce-mailbox")
            : Result<marketing::MailboxOutcome>(Fail(raw.error()));
    if (!outcome) {
      ++counts.errors;
      Count("mails", "error");
      spdlog::warn(R"("event":"bounce_mailbox_mail_failed","code":"{}","detail":"{}")",
                   ErrcCode(outcome.error().code), JsonEscape(outcome.error().message));
      continue;
    }
    Count("mails", marketing::ToString(outcome->kind));
    if (outcome->kind == marketing::MailboxOutcome::Kind::kApplied) ++counts.applied;
    if (outcome->kind == marketing::MailboxOutcome::Kind::kDuplicate) ++counts.duplicate;
    if (outcome->kind == marketing::MailboxOutcome::Kind::kUnattributed) ++counts.unattributed;
    if (outcome->deletable())
      if (auto d = box.Delete(id); !d) return Fail(d.error());
  }
  if (auto f = box.Finish(); !f) return Fail(f.error());
  Count("polls", "ok");
  if (counts.applied + counts.unattributed + counts.errors > 0)
    spdlog::info(
        R"("event":"bounce_mailbox_polled","applied":{},"duplicate":{},"unattributed":{},"errors":{})",
        counts.applied, counts.duplicate, counts.unattributed, counts.errors);
  return counts;
}

void BouncePoller::Start() {
  if (options_.mailbox_url.empty() || thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stop_) {
      lock.unlock();
      if (auto n = RunOnce(); !n)
        spdlog::warn(R"("event":"bounce_mailbox_poll_failed","code":"{}","detail":"{}")",
                     ErrcCode(n.error().code), JsonEscape(n.error().message));
      lock.lock();
      if (cv_.wait_for(lock, std::chrono::seconds(options_.poll_seconds), [this] { return stop_; }))
        break;
    }
  });
}

void BouncePoller::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace crmd::jobs

#include "src/jobs/campaign_sender.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <set>

#include "src/core/log.h"

namespace crmd::jobs {

using marketing::SendReport;
using Queued = marketing::campaign_sends_repo::QueuedRecipient;

namespace {

const char* KindName(SendReport::Kind kind) {
  using K = SendReport::Kind;
  switch (kind) {
    case K::kSent:
      return "sent";
    case K::kTemporary:
      return "deferred";
    case K::kNotAttempted:
      return "relay_unavailable";
    case K::kRecipientRejected:
      return "recipient_rejected";
    case K::kRejected:
      return "rejected";
  }
  return "unknown";
}

}  // namespace

void CampaignSender::Start() {
  std::lock_guard lock(mu_);
  if (!threads_.empty()) return;
  stop_ = false;
  if (runtime_.writes_files())
    spdlog::warn(
        R"("event":"mail_to_files","dir":"{}","detail":"smtp_url is not set: messages are written as .eml files, nothing is delivered")",
        JsonEscape(runtime_.options().mail_dir));
  for (int i = 0; i < std::max(1, options_.concurrency); ++i)
    threads_.emplace_back([this, i] { Loop(i); });
}

void CampaignSender::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (auto& t : threads)
    if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
}

void CampaignSender::Loop(int index) {
  auto transport = runtime_.NewTransport();
  while (true) {
    int handled = 0;
    if (runtime_.PausedUntil() == 0) {
      if (index == 0) {
        if (auto st = delivery_.Advance(); !st)
          spdlog::warn(R"("event":"campaign_advance_failed","detail":"{}")",
                       JsonEscape(st.error().message));
      }
      handled = RunOnce(*transport);
    }
    std::unique_lock lock(mu_);
    if (stop_) return;
    if (handled > 0) continue;  // more may be due right away
    cv_.wait_for(lock, std::chrono::milliseconds(options_.poll_interval_ms),
                 [this] { return stop_; });
    if (stop_) return;
  }
}

std::shared_ptr<const marketing::CampaignTemplates> CampaignSender::TemplatesFor(
    int64_t campaign_id) {
  auto k = campaigns_.Get(campaign_id);
  if (!k) return nullptr;
  {
    std::lock_guard lock(cache_mu_);
    auto it = templates_.find(campaign_id);
    // A campaign's revision, and its template's: an edited template is parsed again.
    auto layout_revision = [](const marketing::Campaign& c) {
      return c.layout ? c.layout->revision : int64_t{0};
    };
    if (it != templates_.end() && it->second->campaign().revision == k->revision &&
        layout_revision(it->second->campaign()) == layout_revision(*k))
      return it->second;
  }
  auto parsed = marketing::CampaignTemplates::Parse(*k);
  if (!parsed) {
    // Saved content is checked, so this is a campaign changed behind the service's back:
    // pause it rather than fail every recipient or retry forever.
    (void)delivery_.Suspend(campaign_id,
                            "its content cannot be rendered: " + parsed.error().message);
    return nullptr;
  }
  auto shared = std::make_shared<const marketing::CampaignTemplates>(std::move(*parsed));
  std::lock_guard lock(cache_mu_);
  templates_[campaign_id] = shared;
  return shared;
}

SendReport CampaignSender::SendOne(mail::Transport& transport,
                                   const marketing::CampaignTemplates& templates, const Queued& r,
                                   const marketing::MailContext& ctx) {
  SendReport report;
  marketing::MailRecipient to{.contact_id = r.contact_id,
                              .email = r.email,
                              .first_name = r.first_name,
                              .last_name = r.last_name,
                              .phone = r.phone,
                              .custom_fields_json = r.custom_fields_json};
  auto message = templates.Build(to, r.round, ctx);
  std::optional<std::string> bytes;
  if (message) {
    auto rendered = runtime_.Render(*message);
    if (rendered)
      bytes = std::move(*rendered);
    else
      message = Fail(rendered.error());
  }
  if (!message) {
    report.kind = SendReport::Kind::kRejected;
    report.reason = "message could not be built: " + message.error().message;
    return report;
  }
  mail::Envelope envelope{.mail_from = runtime_.EnvelopeSender(
                              {.kind = 'c', .owner_id = r.campaign_id, .contact_id = r.contact_id},
                              message->from.address),
                          .recipients = {r.email}};
  mail::SendResult sent = transport.Send(envelope, *bytes);
  report.smtp_code = sent.smtp_code;
  report.reason = sent.detail;
  report.message_id = message->message_id;
  if (sent.ok()) {
    report.kind = SendReport::Kind::kSent;
    report.reason.clear();
  } else if (sent.permanent()) {
    report.kind = sent.stage == mail::SendStage::kRecipient ? SendReport::Kind::kRecipientRejected
                                                            : SendReport::Kind::kRejected;
  } else if (sent.stage == mail::SendStage::kConnection || sent.stage == mail::SendStage::kSender) {
    report.kind = SendReport::Kind::kNotAttempted;  // the relay, not this recipient
  } else {
    report.kind = SendReport::Kind::kTemporary;
  }
  return report;
}

int CampaignSender::RunOnce(mail::Transport& transport) {
  // A message starts only while at least half of its recipient's lease is left (the lease
  // is longer than one message's SMTP timeout); after that another thread or node may
  // lease the recipient again, and sending it here too would send it twice. So a round
  // leases no more than the node's rate can send in half a lease, waits for the first
  // message's turn before it leases, and gives back what the throttle has not let through
  // in time.
  const int64_t lease_s = delivery_.policy().lease_s;
  if (!runtime_.Throttle(stop_, mu_, cv_)) return 0;
  bool have_turn = true;  // the first message's, taken before leasing
  struct ReturnUnused {
    MailRuntime& runtime;
    bool& have_turn;
    ~ReturnUnused() {
      if (have_turn) runtime.ReturnTurn();
    }
  } return_unused{runtime_, have_turn};
  auto leased = delivery_.Lease(runtime_.LeaseBatch(options_.batch, lease_s));
  if (!leased) {
    spdlog::warn(R"("event":"campaign_lease_failed","detail":"{}")",
                 JsonEscape(leased.error().message));
    return 0;
  }
  if (leased->empty()) return 0;
  marketing::MailContext ctx = runtime_.context();
  if (auto doc = settings_.Get(); doc) marketing::ApplySettings(ctx, doc->document);
  std::map<int64_t, std::shared_ptr<const marketing::CampaignTemplates>> templates;
  int handled = 0;
  for (size_t i = 0; i < leased->size(); ++i) {
    const Queued& r = (*leased)[i];
    auto give_back = [&](int64_t at) {
      for (size_t j = i; j < leased->size(); ++j)
        (void)delivery_.Record((*leased)[j],
                               SendReport{.kind = SendReport::Kind::kNotAttempted, .retry_at = at});
    };
    {
      std::lock_guard lock(mu_);
      if (stop_) {
        give_back(0);
        break;
      }
    }
    if (int64_t until = runtime_.PausedUntil(); until != 0) {
      give_back(until);
      break;
    }
    // Each message is a child span of the request that activated (or resent) the campaign.
    LogScope scope(LogContext{.trace = crm::ContinueTrace(r.traceparent, r.tracestate)});
    auto& t = templates[r.campaign_id];
    if (!t) t = TemplatesFor(r.campaign_id);
    SendReport report;
    if (!t) {
      // Suspended (paused) or unreadable just now: back in the queue, untouched.
      report =
          SendReport{.kind = SendReport::Kind::kNotAttempted, .retry_at = clock_.NowUnix() + 5};
    } else {
      if (!have_turn) {
        if (!runtime_.Throttle(stop_, mu_, cv_)) {
          give_back(0);
          break;
        }
        have_turn = true;
      }
      if (!runtime_.MayStart(r.lease_until, lease_s)) {
        give_back(0);  // a no-op for a lease that another thread or node has taken over
        break;         // (return_unused gives the turn back)
      }
      have_turn = false;
      report = SendOne(transport, *t, r, ctx);
      if (options_.metrics) {
        using K = marketing::SendReport::Kind;
        const char* outcome = report.kind == K::kSent           ? "sent"
                              : report.kind == K::kTemporary    ? "deferred"
                              : report.kind == K::kNotAttempted ? "relay_unavailable"
                                                                : "failed";
        options_.metrics
            ->Counter("crmd_mail_messages_total",
                      "Messages handed to the relay, by source and outcome.",
                      {{"source", "campaign"}, {"outcome", outcome}})
            .Inc();
      }
    }
    if (report.kind == SendReport::Kind::kNotAttempted && t) {
      report.retry_at = runtime_.RelayDown();
      spdlog::warn(R"("event":"mail_relay_unavailable","code":{},"detail":"{}")", report.smtp_code,
                   JsonEscape(report.reason));
    } else if (report.kind != SendReport::Kind::kNotAttempted) {
      runtime_.RelayUp();
    }
    if (t)
      spdlog::info(
          R"("event":"campaign_message","campaign_id":{},"contact_id":{},"round":{},"outcome":"{}","smtp_code":{})",
          r.campaign_id, r.contact_id, r.round, KindName(report.kind), report.smtp_code);
    if (auto st = delivery_.Record(r, report); !st)
      spdlog::warn(
          R"("event":"campaign_record_failed","campaign_id":{},"contact_id":{},"detail":"{}")",
          r.campaign_id, r.contact_id, JsonEscape(st.error().message));
    ++handled;
    if (report.kind == SendReport::Kind::kNotAttempted) {
      if (i + 1 < leased->size()) {
        ++i;
        give_back(report.retry_at);
      }
      break;
    }
  }
  return handled;
}

}  // namespace crmd::jobs

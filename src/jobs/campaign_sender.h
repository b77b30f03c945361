#pragma once
// The campaign send loop: `concurrency` threads per node, each with its own SMTP
// connection (mail::Transport), started in App::Start and stopped in App::Stop. Each round
// a thread advances campaign statuses (scheduled -> sending -> sent), leases a small batch
// of due recipients (marketing::CampaignDelivery), renders and sends each message at the node's
// rate, and records each outcome as soon as it is known, so that a crash re-sends at most
// the one message in flight per thread (with the same Message-ID).
//
// A failure of one message never stops the others; a relay that is down (connection,
// greeting, TLS, AUTH or MAIL FROM trouble) pauses every thread with a doubling backoff
// and gives the leases back, so nobody is failed for the relay's sake.
// Thread-safe: Start/Stop/RunOnce may be called from any thread.
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "src/core/metrics.h"
#include "src/governance/settings.h"
#include "src/jobs/mail_runtime.h"
#include "src/marketing/campaign_delivery.h"
#include "src/marketing/campaign_render.h"
#include "src/marketing/campaigns.h"

namespace crmd::jobs {

struct CampaignSenderOptions {
  int concurrency = 2;
  int poll_interval_ms = 1000;
  int batch = 10;  // recipients leased at once per thread: how far a pause may lag
  // crmd_mail_messages_total{source,outcome} (GET /metrics); null: not counted.
  metrics::Registry* metrics = nullptr;
};

class CampaignSender {
 public:
  CampaignSender(marketing::CampaignDelivery& delivery, marketing::CampaignService& campaigns,
                 governance::SettingsService& settings, MailRuntime& runtime, const Clock& clock,
                 CampaignSenderOptions options)
      : delivery_(delivery),
        campaigns_(campaigns),
        settings_(settings),
        runtime_(runtime),
        clock_(clock),
        options_(options) {}
  ~CampaignSender() { Stop(); }
  CampaignSender(const CampaignSender&) = delete;
  CampaignSender& operator=(const CampaignSender&) = delete;

  void Start();
  void Stop();  // waits for the messages in flight (bounded by the SMTP timeout)
  // One round on the calling thread with `transport`: returns how many recipients were
  // handled (sent, failed, retried or skipped).
  int RunOnce(mail::Transport& transport);

 private:
  void Loop(int index);
  std::shared_ptr<const marketing::CampaignTemplates> TemplatesFor(int64_t campaign_id);
  marketing::SendReport SendOne(mail::Transport& transport,
                                const marketing::CampaignTemplates& templates,
                                const marketing::campaign_sends_repo::QueuedRecipient& r,
                                const marketing::MailContext& ctx);

  marketing::CampaignDelivery& delivery_;
  marketing::CampaignService& campaigns_;
  governance::SettingsService& settings_;
  MailRuntime& runtime_;
  const Clock& clock_;
  const CampaignSenderOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::thread> threads_;

  // Parsed templates by campaign id, refreshed when the campaign's revision moves.
  std::mutex cache_mu_;
  std::map<int64_t, std::shared_ptr<const marketing::CampaignTemplates>> templates_;
};

}  // namespace crmd::jobs

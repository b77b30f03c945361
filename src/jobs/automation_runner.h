#pragma once
// The marketing loop of a node (docs/marketing.md): started in App::Start, stopped in
// App::Stop, next to the campaign sender. Each round it
//  1. claims new outbox events for automation triggers and list-fed sequences
//     (marketing::AutomationRuns::ClaimEvents, consumer "automations");
//  2. runs due automation steps: database steps are applied by the service in the
//     transaction that advances the run; send_email and call_webhook come back leased
//     and are performed here, their outcome recorded as soon as it is known;
//  3. sends due sequence emails and double opt-in confirmation emails the same way.
// A crash between a send and its record sends again after the lease with the same
// Message-ID (or webhook-id), so the receiver can de-duplicate (at least once).
// Nothing sleeps for a wait step: a wait is a due time in the database.
//
// Thread-safe: Start/Stop/RunOnce may be called from any thread.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "src/core/clock.h"
#include "src/core/http_client.h"
#include "src/core/metrics.h"
#include "src/core/result.h"
#include "src/governance/settings.h"
#include "src/jobs/mail_runtime.h"
#include "src/marketing/automation_runs.h"
#include "src/marketing/templates.h"

namespace crmd::jobs {

struct AutomationRunnerOptions {
  int poll_interval_ms = 1000;
  int batch = 20;              // runs, sequence emails and confirmations per round
  bool allow_private = false;  // allow_private_network_targets, for call_webhook
  int webhook_timeout_ms = 10000;
  int64_t confirm_link_ttl_s = 7 * 24 * 3600;  // double opt-in links
  // crmd_mail_messages_total{source,outcome} (GET /metrics); null: not counted.
  metrics::Registry* metrics = nullptr;
  // The templates that send_email steps and sequence emails name (template_id); null: such
  // a message fails. Must outlive the runner.
  const marketing::TemplateService* templates = nullptr;
};

// The Standard Webhooks secret ("whsec_...") to sign a call_webhook step's request to
// `url` with: the secret of the outgoing webhook endpoint registered at that URL.
// kPermissionDenied when no endpoint is: the step fails without posting (a call_webhook
// target follows the rule of outgoing webhooks, which an administrator sets up).
using WebhookSecretFor = std::function<Result<std::string>(const std::string& url)>;

class AutomationRunner {
 public:
  AutomationRunner(marketing::AutomationRuns& runs, governance::SettingsService& settings,
                   MailRuntime& runtime, http::HttpClient& http, WebhookSecretFor secret_for,
                   const Clock& clock, AutomationRunnerOptions options)
      : runs_(runs),
        settings_(settings),
        runtime_(runtime),
        http_(http),
        secret_for_(std::move(secret_for)),
        clock_(clock),
        options_(options) {}
  ~AutomationRunner() { Stop(); }
  AutomationRunner(const AutomationRunner&) = delete;
  AutomationRunner& operator=(const AutomationRunner&) = delete;

  void Start();
  void Stop();  // waits for the message or call in flight
  // One round on the calling thread: answers how many items were handled.
  int RunOnce(mail::Transport& transport);

 private:
  void Loop();
  marketing::MailContext Context() const;
  // The template a step or sequence email names (nullopt: none).
  Result<std::optional<marketing::EmailTemplate>> LayoutOf(const nlohmann::json& item) const;
  marketing::StepOutcome SendEmail(mail::Transport& transport, const marketing::LeasedStep& s,
                                   const marketing::MailContext& ctx);
  marketing::StepOutcome CallWebhook(const marketing::LeasedStep& s);
  // Renders and sends at the node's rate; maps the SMTP result onto a step outcome. Not
  // attempted (given back) once less than half of the lease that ends at `lease_until` is
  // left: another worker may lease it again by the time the message is out. `ref` names
  // the message in its VERP return path.
  marketing::StepOutcome Deliver(mail::Transport& transport, const Result<mail::Message>& message,
                                 int64_t lease_until, const mail::VerpRef& ref);
  int RunSteps(mail::Transport& transport, const marketing::MailContext& ctx);
  int RunSequences(mail::Transport& transport, const marketing::MailContext& ctx);
  int RunOptins(mail::Transport& transport, const marketing::MailContext& ctx);
  bool Stopping();

  marketing::AutomationRuns& runs_;
  governance::SettingsService& settings_;
  MailRuntime& runtime_;
  http::HttpClient& http_;
  const WebhookSecretFor secret_for_;
  const Clock& clock_;
  const AutomationRunnerOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace crmd::jobs

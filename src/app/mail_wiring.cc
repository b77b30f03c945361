#include "src/app/shared_secrets.h"
#include "src/app/wiring.h"
#include "src/console/links.h"
#include "src/rest/ip_limiter.h"

namespace crmd::app {
namespace {

// "Download my data" on the preference page: a few a minute for one contact (and for one
// client address), with REST's sliding per-key limit.
constexpr int kDataDownloadsPerMinute = 3;

std::function<int(const std::string&)> DataDownloadLimit(const Clock& clock) {
  auto limiter = std::make_shared<rest::IpLimiter>(kDataDownloadsPerMinute, clock);
  return [limiter](const std::string& key) { return limiter->Hit(key); };
}

// The bounce mailbox: reports that come back to the VERP return paths, applied through the
// provider receivers' path; polled by one node at a time when a mailbox URL is set.
void WireBounceMailbox(App::Services& s) {
  const auto& verp = s.mail_runtime->options().verp;
  if (!verp) return;
  s.bounce_mailbox =
      std::make_unique<marketing::BounceMailbox>(*s.db, *s.clock, *s.marketing->receivers, *verp);
  if (s.config.bounce_mailbox_url.empty()) return;
  s.bounce_poller = std::make_unique<jobs::BouncePoller>(
      *s.db, *s.bounce_mailbox, *s.clock,
      jobs::BouncePollerOptions{.mailbox_url = s.config.bounce_mailbox_url,
                                .poll_seconds = s.config.bounce_poll_seconds,
                                .metrics = s.metrics.get()});
}

}  // namespace

Status WireMail(App::Services& s) {
  jobs::MailRuntimeOptions options{
      .smtp_url = s.config.smtp_url,
      .mail_dir = s.config.mail_dir,
      .rate_per_second = s.config.mail_rate_per_second,
      .context = s.mail_context,
  };
  if (!s.config.dkim_private_key_file.empty()) {
    options.dkim = mail::DkimOptions{.private_key_file = s.config.dkim_private_key_file,
                                     .selector = s.config.dkim_selector,
                                     .domain = s.config.dkim_domain};
  }
  if (!s.config.bounce_domain.empty()) {
    // One secret for every node: a return path made on one is read back on any other.
    auto secret = SharedSecret(*s.db, "bounce_verp_v1", *s.random, *s.clock);
    if (!secret) return Fail(secret.error());
    options.verp.emplace(std::move(*secret), s.config.bounce_domain);
  }
  auto runtime = jobs::MailRuntime::Create(std::move(options), *s.clock);
  if (!runtime) return Fail(runtime.error());
  s.mail_runtime = std::move(*runtime);
  WireBounceMailbox(s);
  s.campaign_sender = std::make_unique<jobs::CampaignSender>(
      *s.marketing->delivery, *s.marketing->campaigns, *s.governance->settings, *s.mail_runtime,
      *s.clock,
      jobs::CampaignSenderOptions{.concurrency = s.config.mail_concurrency,
                                  .poll_interval_ms = s.config.mail_poll_interval_ms,
                                  .metrics = s.metrics.get()});
  s.automation_runs = std::make_unique<marketing::AutomationRuns>(
      *s.db, *s.clock, *s.crm->contacts, marketing::RunPolicy{.lease_s = s.config.mail_lease_s});
  // call_webhook steps post only to an outgoing webhook endpoint's URL, signed with its
  // secret (docs/marketing.md); any other URL fails the step.
  jobs::WebhookSecretFor secret_for =
      [endpoints = s.webhook_endpoints.get()](const std::string& url) -> Result<std::string> {
    auto found = endpoints->SecretForUrl(url);
    if (!found) return Fail(found.error());
    if (!*found)
      return Fail(Errc::kPermissionDenied,
                  "call_webhook target is not an outgoing webhook endpoint's URL");
    return **found;
  };
  s.automation_runner = std::make_unique<jobs::AutomationRunner>(
      *s.automation_runs, *s.governance->settings, *s.mail_runtime, *s.http_client,
      std::move(secret_for), *s.clock,
      jobs::AutomationRunnerOptions{.poll_interval_ms = s.config.mail_poll_interval_ms,
                                    .allow_private = s.config.allow_private_network_targets,
                                    .webhook_timeout_ms = s.config.webhook_timeout_ms,
                                    .metrics = s.metrics.get(),
                                    .templates = s.marketing->templates.get()});
  std::string business;
  if (auto doc = s.governance->settings->Get(); doc && doc->document.contains("business"))
    business = doc->document["business"].value("name", "");
  for (auto& [prefix, handler] : console::LinkRoutes({.delivery = s.marketing->delivery.get(),
                                 .contacts = s.crm->contacts.get(),
                                 .preferences = s.crm->list_preferences.get(),
                                 .tokens = s.link_tokens.get(),
                                 .business_name = business,
                                 .history = s.marketing->contact_history.get(),
                                 .download_limit = DataDownloadLimit(*s.clock)}))
    s.router.Prefix(prefix, std::move(handler));
  return Ok();
}

}  // namespace crmd::app

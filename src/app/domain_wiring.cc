// The domain's three rooms, each built on the ones before it: governance, the contact
// book (with marketing's usage hooks and the system DNS resolver), marketing.
#include <spdlog/spdlog.h>

#include "src/app/services.h"
#include "src/app/shared_secrets.h"
#include "src/app/wiring.h"
#include "src/webhooks/endpoints_repo.h"

namespace crmd::app {

namespace {

// The host of an http(s) URL, for the default sender address.
std::string UrlHost(const std::string& url) {
  auto scheme = url.find("://");
  std::string rest = scheme == std::string::npos ? url : url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (!rest.empty() && rest.front() == '[') return "localhost";
  rest = rest.substr(0, rest.find(':'));
  if (rest.empty() || rest.find('.') == std::string::npos) return "localhost";
  return rest;
}

// A call_webhook step may post only where an administrator set up an outgoing webhook.
marketing::WebhookTargetKnown WebhookTargetKnown() {
  return [](store::Conn& c, const std::string& url) -> Result<bool> {
    auto secret = webhooks::endpoints_repo::SecretForUrl(c, url);
    if (!secret) return Fail(secret.error());
    return secret->has_value();
  };
}

// A test send goes out at once through this node's mail runtime (built after the domain,
// so looked up at the time of the send), DKIM-signed like every campaign message.
marketing::TestMailer TestMailer(App::Services& s) {
  return [&s](const mail::Message& m) -> Status {
    if (!s.mail_runtime) return Fail(Errc::kUnavailable, "mail is not set up on this server");
    auto bytes = s.mail_runtime->Render(m);
    if (!bytes) return Fail(Errc::kInvalidArgument, "the test message: " + bytes.error().message);
    auto transport = s.mail_runtime->NewTransport();
    auto sent =
        transport->Send({.mail_from = m.from.address, .recipients = {m.to.address}}, *bytes);
    if (!sent.ok())
      return Fail(Errc::kUnavailable, "the relay did not take the test message to " + m.to.address +
                                          ": " + sent.detail);
    return Ok();
  };
}

// Console users (active ones) may receive test sends.
marketing::ConsoleUserKnown ConsoleUser(App::Services& s) {
  return [&s](const std::string& email) -> Result<bool> {
    if (!s.users) return false;
    auto user = s.users->FindByEmail(email);
    if (!user) return Fail(user.error());
    return *user && (*user)->active();
  };
}

}  // namespace

Status BuildDomain(App::Services& s) {
  auto governance = governance::MakeServices({.db = s.db.get(),
                                              .read_db = s.read_db.get(),
                                              .clock = s.clock.get(),
                                              .random = s.random.get(),
                                              // Approval links point at this server's console.
                                              .approval_url_base = s.config.Issuer(),
                                              .metrics = s.metrics.get()});
  if (!governance) return Fail(governance.error());
  s.governance = std::move(*governance);

  // Email validation and the pre-send check ask dns_server when set, else the system's.
  s.resolver = crm::MakeSystemResolver({.server = s.config.dns_server});
  s.marketing_usage = std::make_unique<marketing::MarketingUsage>();
  // The suppression list keeps addresses as HMACs under this key: every node, and crmctl,
  // must use the same one, for as long as the entries exist.
  auto suppression_key = SharedSecret(*s.db, kSuppressionSecret, *s.random, *s.clock);
  if (!suppression_key) return Fail(suppression_key.error());
  auto crm = crm::MakeServices(*s.governance, {.db = s.db.get(),
                                               .read_db = s.read_db.get(),
                                               .clock = s.clock.get(),
                                               .random = s.random.get(),
                                               .resolver = s.resolver.get(),
                                               .usage = s.marketing_usage.get(),
                                               .contact_exit = s.marketing_usage.get(),
                                               .suppression_key = *suppression_key,
                                               .import_max_bytes = s.config.import_max_bytes});
  if (!crm) return Fail(crm.error());
  s.crm = std::move(*crm);
  // Contacts that were unsubscribed, bounced or complained before the list existed
  // (migration 0071) are entered once; afterwards this finds nothing to do.
  auto backfilled = s.crm->suppressions->Backfill();
  if (!backfilled) return Fail(backfilled.error());
  if (*backfilled > 0)
    spdlog::info(R"("event":"suppressions_backfilled","entered":{})", *backfilled);

  // The mail context campaigns render previews with (and the mail runtime sends with).
  auto secret = SharedSecret(*s.db, "mail_link_tokens_v1", *s.random, *s.clock);
  if (!secret) return Fail(secret.error());
  s.link_tokens = std::make_unique<mail::LinkTokens>(*secret, *s.clock);
  std::string from = s.config.mail_from;
  if (from.empty()) from = "crmd@" + UrlHost(s.config.Issuer());
  s.mail_context = {.public_base_url = s.config.Issuer(),
                    .default_sender = {"", from},
                    .links = s.link_tokens.get()};

  auto marketing = marketing::MakeServices(
      *s.governance, *s.crm,
      {.mail = &s.mail_context,
       .send_policy = {.lease_s = s.config.mail_lease_s},
       .receiver_policy = {.window_s = s.config.mail_receiver_window_s,
                           .retention_s = s.config.mail_receiver_retention_s},
       .http = s.http_client.get(),
       .webhook_target_known = WebhookTargetKnown(),
       .test_mailer = TestMailer(s),
       .console_user = ConsoleUser(s),
       .sender_auth = {.resolver = s.resolver.get(),
                       .smtp_url = s.config.smtp_url,
                       .dkim_private_key_file = s.config.dkim_private_key_file,
                       .dkim_selector = s.config.dkim_selector,
                       .dkim_domain = s.config.dkim_domain}});
  if (!marketing) return Fail(marketing.error());
  s.marketing = std::move(*marketing);
  return Ok();
}

}  // namespace crmd::app

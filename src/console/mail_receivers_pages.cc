#include "src/console/mail_receivers_pages.h"

#include <memory>

namespace crmd::console {
namespace {

constexpr const char* kMailReceiversPath = "/console/mail-receivers";

std::string CredentialsText(const marketing::MailReceiver& r) {
  if (r.provider == "postmark")
    return r.has_password ? "basic auth as " + r.username.value_or("") : "no password";
  if (r.provider == "sendgrid") return r.has_signing_key ? "verification key set" : "no key";
  if (r.provider == "ses") return "SNS topic " + r.topic_arn.value_or("");
  return r.has_signing_key ? "signing key set" : "no key";
}

// The bounce mailbox section: off, or its setup and the newest unattributed mails.
Result<ViewMap> BounceMailboxView(const MailReceiversPagesDeps& d) {
  ViewMap m{{"bounce_on", d.bounce_mailbox != nullptr}};
  if (!d.bounce_mailbox) return m;
  auto count = d.bounce_mailbox->UnattributedCount();
  if (!count) return Fail(count.error());
  auto left = d.bounce_mailbox->Unattributed(50);
  if (!left) return Fail(left.error());
  ViewList rows;
  for (const auto& u : *left)
    rows.emplace_back(ViewMap{{"report_id", u.report_id},
                              {"subject", u.subject},
                              {"from", u.sender},
                              {"reason", u.reason},
                              {"last_seen_at", FormatRfc3339(u.last_seen_at)}});
  m.emplace("bounce_domain", d.bounce_domain);
  m.emplace("bounce_url", d.bounce_mailbox_url.empty() ? "not polled (bounce_mailbox_url)"
                                                       : d.bounce_mailbox_url);
  m.emplace("unattributed_count", std::to_string(*count));
  m.emplace("has_unattributed", !rows.empty());
  m.emplace("unattributed", std::move(rows));
  return m;
}

http::Response MailReceiversPage(const MailReceiversPagesDeps& d, const Person& p) {
  const PageChrome chrome = ChromeFor(p, "suppressions");
  auto list = d.receivers->List();
  if (!list) return ServiceErrorPage(list.error(), chrome, kMailReceiversPath);
  ViewList rows;
  for (const auto& r : *list)
    rows.emplace_back(ViewMap{
        {"provider", r.provider},
        {"enabled", r.enabled},
        {"credentials", CredentialsText(r)},
        {"url", d.rest_base_url + "/mail/events/" + r.provider},
        {"received", std::to_string(r.received_count)},
        {"last_received_at", r.last_received_at ? FormatRfc3339(*r.last_received_at) : "never"}});
  auto bounce = BounceMailboxView(d);
  if (!bounce) return ServiceErrorPage(bounce.error(), chrome, kMailReceiversPath);
  ViewMap ctx{{"has_rows", !rows.empty()}, {"rows", std::move(rows)}};
  ctx.merge(*bounce);
  return RenderPage(200, "Mail receivers", "mail_receivers.mustache", ctx, chrome);
}

}  // namespace

ConsoleRoutes MailReceiversRoutes(MailReceiversPagesDeps deps) {
  auto d = std::make_shared<MailReceiversPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back(kMailReceiversPath, [d](const http::Request& r) {
    return WithAdmin(d->people, r, "suppressions", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD", ChromeFor(p, "suppressions"))) return *refused;
      return MailReceiversPage(*d, p);
    });
  });
  return routes;
}

}  // namespace crmd::console

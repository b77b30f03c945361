#pragma once
// The pre-send check (docs/marketing.md "The pre-send check"): what the activation preview
// of a campaign (and of an automation whose steps send email) finds wrong with the message,
// its sender's DNS and its audience, as checks {id, severity, message, detail}. Only
// problems are listed. An `error` blocks the activation until it is fixed or a person
// overrides it on the approval page; a `warning` is shown and recorded.
//
// Ids: spf, dkim, dmarc, alignment (SenderAuthChecks); unsubscribe, postal_address, links,
// size, alt_text, subject, merge_empty (ContentChecks, MergeEmptyCheck); audience_role,
// audience_disposable, audience_unconfirmed, audience_unengaged (AudienceChecks).
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "src/core/clock.h"
#include "src/crm/resolver.h"
#include "src/mail/message.h"

namespace crmd::marketing {

struct PresendCheck {
  std::string id;
  std::string severity;  // "error" | "warning"
  std::string message;   // a sentence for the person and the assistant
  nlohmann::json detail = nlohmann::json::object();
};

nlohmann::json ToJson(const std::vector<PresendCheck>& checks);
// The ids of the checks of severity error, in order.
std::vector<std::string> ErrorIds(const std::vector<PresendCheck>& checks);

struct SenderAuthOptions {
  crm::Resolver* resolver = nullptr;  // null: sender authentication is not checked
  std::string smtp_url;               // its host is the relay SPF should name; empty: files
  std::string dkim_private_key_file;  // all three empty: messages are not signed
  std::string dkim_selector;
  std::string dkim_domain;
  int64_t cache_s = 60;  // a domain's findings are kept this long (preview, then confirm)
};

// Sender authentication of a From domain, looked up in DNS: spf (a v=spf1 record that
// names the relay when smtp_url's host is known), dkim (the key published at
// <dkim_selector>._domainkey.<dkim_domain> is the configured key's public half: an error
// when it is missing or differs), alignment (the DKIM domain is the From domain's, or its
// organisational domain's), dmarc (a v=DMARC1 record for the domain or its organisational
// domain). A lookup that times out is a warning. Names reserved for documentation and
// testing (RFC 2606, RFC 6761) are not looked up. Thread-safe.
class SenderAuthChecks {
 public:
  SenderAuthChecks(SenderAuthOptions options, const Clock& clock)
      : o_(std::move(options)), clock_(clock) {}
  SenderAuthChecks(const SenderAuthChecks&) = delete;
  SenderAuthChecks& operator=(const SenderAuthChecks&) = delete;

  std::vector<PresendCheck> Check(const std::string& from_address);
  // How long a domain's findings are kept (tests that change DNS records set 0).
  void set_cache_s(int64_t seconds) { cache_s_ = seconds; }

 private:
  std::vector<PresendCheck> Lookup(const std::string& domain);

  const SenderAuthOptions o_;
  const Clock& clock_;
  std::atomic<int64_t> cache_s_{o_.cache_s};
  std::mutex mu_;
  std::map<std::string, std::pair<int64_t, std::vector<PresendCheck>>> cache_;
};

// The organisational domain of `domain`, approximated by its last two labels (three when
// the second-level label is a short public suffix such as co.uk).
std::string OrganisationalDomain(const std::string& domain);
// Names that never have real DNS records: example.{com,net,org}, .test, .example, .invalid,
// .localhost, localhost, and IP literals.
bool IsReservedDomain(const std::string& domain);

}  // namespace crmd::marketing

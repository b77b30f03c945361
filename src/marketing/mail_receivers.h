#pragma once
// Provider event receivers (docs/mail.md, "Provider event receivers"): Mailgun, Postmark
// and SendGrid post delivery events to crmd, each authenticated by the provider's own
// mechanism, and crmd applies them to the message it sent.
//
// One receiver per provider, configured by an administrator (crmctl, REST):
//  - mailgun: the webhook signing key (an HMAC key, kept as given: verification needs it);
//  - postmark: a basic-auth user name and password (only the password's SHA-256 is kept);
//  - sendgrid: the Event Webhook's verification key (a public key);
//  - ses: the SNS topic ARN whose messages it takes (SNS signs with Amazon's certificate).
// No API answer ever includes a key or password.
//
// Receive*() checks authenticity first and refuses with kUnauthenticated, having written
// nothing, when the provider is not configured or disabled, the credentials or signature
// do not verify, or a signed timestamp is outside policy.window_s. Then ONE transaction
// records every event id as processed (a replay is answered and applied once; Mailgun's
// token is single-use the same way) and applies each new event: hard bounce and complaint
// through CampaignDelivery::FeedbackIn (contact, campaign by Message-ID, suppression),
// unsubscribe as the unsubscribe link, soft bounce counted per contact (never
// suppressing), delivered and the rest accepted without effect. Processed ids are kept
// for policy.retention_s.
//
// Thread-safe: no state of its own beyond the injected services.
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/http_client.h"
#include "src/core/result.h"
#include "src/governance/settings.h"
#include "src/mail/provider_events.h"
#include "src/store/db.h"

namespace crmd::marketing {

class CampaignDelivery;

struct MailReceiver {
  std::string provider;  // mailgun | postmark | sendgrid | ses
  bool has_signing_key = false;
  std::optional<std::string> username;
  bool has_password = false;
  bool enabled = true;
  int64_t received_count = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::optional<int64_t> last_received_at;
  std::optional<std::string> topic_arn;  // ses
};
// {"provider", "enabled", "has_signing_key" | "username"/"has_password" | "has_public_key",
// "received_count", "created_at", "updated_at", "last_received_at"}: never a secret.
nlohmann::json ToJson(const MailReceiver& r);

struct MailReceiverInput {
  std::optional<std::string> signing_key;  // mailgun
  std::optional<std::string> username;     // postmark
  std::optional<std::string> password;     // postmark, at least 16 characters
  std::optional<std::string> public_key;   // sendgrid, base64 DER EC P-256
  std::optional<std::string> topic_arn;    // ses, arn:aws:sns:<region>:<account>:<topic>
  std::optional<bool> enabled;
};
// Reads {"signing_key", "username", "password", "public_key", "topic_arn", "enabled"}, the
// members the
// provider takes; kInvalidArgument "<field>: ..." otherwise.
Result<MailReceiverInput> MailReceiverInputFromJson(std::string_view provider,
                                                    const nlohmann::json& j);

struct ReceiverPolicy {
  int64_t window_s = 300;           // how far a signed timestamp may be from now
  int64_t retention_s = 7 * 86400;  // how long processed event ids are remembered
};

struct ReceiverRequest {
  std::string_view raw_body;                         // what a signature covers
  const nlohmann::json* body = nullptr;              // the parsed JSON body
  std::optional<std::string_view> authorization;     // Authorization header
  std::optional<std::string_view> signature_header;  // SendGrid's signature header
  std::optional<std::string_view> timestamp_header;  // SendGrid's timestamp header
  std::string request_id;
};

class MailReceivers {
 public:
  static constexpr size_t kMinSecret = 16;
  static constexpr size_t kMaxSecret = 512;

  // `http` fetches SNS signing certificates and confirms SNS subscriptions (only ever on an
  // SNS host); null: the SES receiver answers 503 to everything signed.
  // `settings` (may be null: the defaults) gives soft_bounce_limit.
  MailReceivers(store::Database& db, const Clock& clock, CampaignDelivery& delivery,
                ReceiverPolicy policy, http::HttpClient* http = nullptr,
                governance::SettingsService* settings = nullptr)
      : db_(db),
        clock_(clock),
        delivery_(delivery),
        policy_(policy),
        http_(http),
        settings_(settings) {}
  MailReceivers(const MailReceivers&) = delete;
  MailReceivers& operator=(const MailReceivers&) = delete;

  static bool KnownProvider(std::string_view provider);

  // Creates the provider's receiver or changes the members given. A new receiver needs
  // its credentials (kInvalidArgument naming the member otherwise).
  Result<MailReceiver> Configure(const std::string& provider, const MailReceiverInput& in);
  Result<std::vector<MailReceiver>> List();
  Result<MailReceiver> Get(const std::string& provider);  // kNotFound
  Status Delete(const std::string& provider);             // kNotFound

  // {"received": n, "duplicate": bool, "results": [...]}: see the header comment.
  Result<nlohmann::json> ReceiveMailgun(const ReceiverRequest& req);
  Result<nlohmann::json> ReceivePostmark(const ReceiverRequest& req);
  Result<nlohmann::json> ReceiveSendGrid(const ReceiverRequest& req);
  // SNS: the topic must be the configured one, SigningCertURL on an SNS host, the message
  // signed by that certificate (fetched once per URL and kept for this process). A
  // SubscriptionConfirmation is confirmed by GET of its SubscribeURL (an SNS host too):
  // {"confirmed": true}; kUnavailable when the certificate or the confirmation cannot be
  // fetched (SNS retries).
  Result<nlohmann::json> ReceiveSes(const ReceiverRequest& req);
  // Reports read from the bounce mailbox (bounce_mailbox.h), already attributed to their
  // message by its VERP return path: applied as a receiver's events are, once per
  // event_id (the report's Message-ID), under the source "mailbox".
  Result<nlohmann::json> ApplyFromMailbox(const std::vector<mail::ProviderEvent>& events,
                                          const std::string& request_id) {
    return Apply(kMailboxSource, "", events, request_id);
  }
  static constexpr const char* kMailboxSource = "mailbox";

 private:
  // settings soft_bounce_limit: `count` soft bounces within `days` make a hard bounce.
  struct SoftBounceLimit {
    int64_t count = 3;
    int64_t days = 7;
  };
  Result<SoftBounceLimit> SoftBounceLimitIn(store::Conn& c);
  struct Stored;
  Result<Stored> Authenticating(const std::string& provider);
  Result<nlohmann::json> Apply(const std::string& provider, const std::string& once_key,
                               const std::vector<mail::ProviderEvent>& events,
                               const std::string& request_id);
  Result<nlohmann::json> ApplyOne(store::Conn& c, const std::string& provider,
                                  const mail::ProviderEvent& e, const std::string& request_id);
  Status CheckTimestamp(std::string_view timestamp) const;
  Result<std::string> SnsCertificate(const std::string& url);
  Result<nlohmann::json> ConfirmSnsSubscription(const std::string& subscribe_url);

  store::Database& db_;
  const Clock& clock_;
  CampaignDelivery& delivery_;
  const ReceiverPolicy policy_;
  http::HttpClient* const http_;
  governance::SettingsService* const settings_;
  std::mutex certs_mu_;
  std::map<std::string, std::string> certs_;  // SigningCertURL -> PEM; guarded by certs_mu_
};

}  // namespace crmd::marketing

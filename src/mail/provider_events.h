#pragma once
// Delivery events that email providers post to crmd (docs/mail.md, "Provider event
// receivers"): each provider's own authenticity check and the mapping of its payload onto
// one ProviderEvent per recipient event. Plain values in, plain values out: nothing here
// knows of contacts, campaigns or the database, and nothing keeps state (thread-safe).
//
// Every signature is compared in constant time (crypto::ConstantTimeEqual) or checked by
// OpenSSL; a malformed signature is simply not valid.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"

namespace crmd::mail {

enum class ProviderEventKind {
  kDelivered,
  kSoftBounce,   // temporary: counted, never suppressing
  kHardBounce,   // permanent: the contact bounced, the address suppressed
  kComplaint,    // spam report: the contact complained, the address suppressed
  kUnsubscribe,  // the recipient unsubscribed at the provider
  kIgnored,      // opens, clicks, queueing: accepted and not applied
};
// "delivered" | "soft_bounce" | "hard_bounce" | "complaint" | "unsubscribe" | "ignored".
const char* ToString(ProviderEventKind kind);

struct ProviderEvent {
  // The provider's id of the event, or, where it carries none, "sha256:<hex>" of the
  // event's own JSON as posted: a retry of the same event carries the same id.
  std::string event_id;
  ProviderEventKind kind = ProviderEventKind::kIgnored;
  std::string provider_type;  // the provider's own name for it ("failed", "HardBounce")
  std::string email;          // the recipient, as the provider wrote it
  std::string message_id;     // the Message-ID crmd sent, when the provider reports it
};

// ---- Mailgun: {"signature": {"timestamp", "token", "signature"}, "event-data": {...}}.
struct MailgunSignature {
  std::string timestamp;  // unix seconds, as a decimal string
  std::string token;      // 50 random characters, single-use
  std::string signature;  // hex HMAC-SHA256(signing key, timestamp + token)
};
// The "signature" object of a payload; kInvalidArgument when missing or malformed.
Result<MailgunSignature> MailgunSignatureOf(const nlohmann::json& body);
// Whether `s.signature` is the HMAC of timestamp + token under `signing_key`.
bool VerifyMailgun(std::string_view signing_key, const MailgunSignature& s);
// The "event-data" object: delivered; failed with severity permanent (hard bounce) or
// temporary (soft bounce); complained; unsubscribed; anything else ignored. The event id
// is event-data.id; the Message-ID is event-data.message.headers.message-id.
Result<ProviderEvent> ParseMailgun(const nlohmann::json& body);

// ---- Postmark: one record per POST, RecordType Delivery, Bounce, SpamComplaint or
// SubscriptionChange. Bounce types HardBounce, BadEmailAddress, ManuallyDeactivated and
// Blocked are hard; SoftBounce, Transient, DnsError and AutoResponder-like types are soft;
// SpamComplaint/SpamNotification are complaints. The Message-ID is Metadata's
// "crmd-message-id" when the sender set one (Postmark's own MessageID is not crmd's).
Result<ProviderEvent> ParsePostmark(const nlohmann::json& body);

// ---- SendGrid Event Webhook: an array of events, signed with ECDSA P-256 over
// timestamp + raw body (headers X-Twilio-Email-Event-Webhook-Signature, base64 DER, and
// X-Twilio-Email-Event-Webhook-Timestamp). `public_key` is the base64 DER
// SubjectPublicKeyInfo SendGrid shows ("verification key").
inline constexpr const char* kSendGridSignatureHeader = "X-Twilio-Email-Event-Webhook-Signature";
inline constexpr const char* kSendGridTimestampHeader = "X-Twilio-Email-Event-Webhook-Timestamp";
// kInvalidArgument when `public_key` is not a base64 DER EC P-256 public key.
Status CheckSendGridKey(std::string_view public_key);
bool VerifySendGrid(std::string_view public_key, std::string_view timestamp,
                    std::string_view raw_body, std::string_view signature_b64);
// delivered; bounce (type "blocked": soft), deferred (soft); spamreport; unsubscribe and
// group_unsubscribe; the rest ignored. Event id sg_event_id; Message-ID "smtp-id".
Result<std::vector<ProviderEvent>> ParseSendGrid(const nlohmann::json& body);

// ---- Amazon SES through SNS: an SNS HTTP(S) message whose Message is an SES notification.
struct SnsMessage {
  std::string type;  // Notification | SubscriptionConfirmation | UnsubscribeConfirmation
  std::string message_id, topic_arn, message, timestamp;
  std::optional<std::string> subject;  // Notification only, when present
  std::string subscribe_url, token;    // the confirmations
  std::string signature_version;       // "1" (SHA1withRSA) or "2" (SHA256withRSA)
  std::string signature;               // base64
  std::string signing_cert_url;
};
// The members SNS signs must be there as strings; kInvalidArgument otherwise.
Result<SnsMessage> ParseSns(const nlohmann::json& body);
// What SNS signs: "Key\nvalue\n" for each signed key of the message's type, in order.
std::string SnsStringToSign(const SnsMessage& m);
// Whether `url` is https on an SNS host (sns.<region>.amazonaws.com, or .com.cn), with no
// user, port or other host: the only place a signing certificate or a subscription
// confirmation is fetched from.
bool IsSnsUrl(std::string_view url);
// Whether `m` is signed by the certificate `cert_pem` (PEM X.509), as its signature
// version says.
bool VerifySns(std::string_view cert_pem, const SnsMessage& m);
// The SES notification in a Notification's Message (notificationType, or eventType for
// event publishing): Bounce (Permanent: hard; Transient, Undetermined: soft), Complaint,
// Delivery; one event per recipient, id "<SNS MessageId>/<n>", Message-ID from
// mail.commonHeaders.messageId or the Message-ID header; the rest ignored.
Result<std::vector<ProviderEvent>> ParseSes(const SnsMessage& m);

// A decimal unix timestamp; nullopt-like failure as kInvalidArgument.
Result<int64_t> ParseUnixSeconds(std::string_view text);

}  // namespace crmd::mail

#include "src/mail/provider_events.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>

#include "src/core/crypto.h"

namespace crmd::mail {
namespace {

using nlohmann::json;
using K = ProviderEventKind;

std::string StringAt(const json& obj, const char* name) {
  if (!obj.is_object()) return "";
  auto it = obj.find(name);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// A stable id for an event that carries none: the same JSON posted again hashes the same.
std::string DerivedId(const json& event) { return "sha256:" + crypto::Sha256Hex(event.dump()); }

std::string IdOf(const json& event, const char* name) {
  if (!event.is_object() || !event.contains(name)) return DerivedId(event);
  const json& v = event[name];
  if (v.is_string() && !v.get<std::string>().empty()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return DerivedId(event);
}

K PostmarkBounceKind(const std::string& type) {
  if (type == "HardBounce" || type == "BadEmailAddress" || type == "ManuallyDeactivated" ||
      type == "Blocked" || type == "DMARCPolicy")
    return K::kHardBounce;
  if (type == "SpamComplaint" || type == "SpamNotification") return K::kComplaint;
  if (type == "Unsubscribe") return K::kUnsubscribe;
  if (type == "SoftBounce" || type == "Transient" || type == "DnsError" ||
      type == "AutoResponder" || type == "Undeliverable" || type == "Unknown")
    return K::kSoftBounce;
  return K::kIgnored;
}

std::string PostmarkMessageId(const json& body) {
  if (!body.contains("Metadata") || !body["Metadata"].is_object()) return "";
  return StringAt(body["Metadata"], "crmd-message-id");
}

Result<ProviderEvent> ParseSendGridEvent(const json& e) {
  if (!e.is_object()) return Fail(Errc::kInvalidArgument, "each event must be an object");
  std::string type = StringAt(e, "event");
  if (type.empty()) return Fail(Errc::kInvalidArgument, "event: is required (a string)");
  ProviderEvent out{.event_id = IdOf(e, "sg_event_id"),
                    .provider_type = type,
                    .email = StringAt(e, "email"),
                    .message_id = StringAt(e, "smtp-id")};
  if (type == "delivered")
    out.kind = K::kDelivered;
  else if (type == "bounce")
    out.kind = StringAt(e, "type") == "blocked" ? K::kSoftBounce : K::kHardBounce;
  else if (type == "deferred")
    out.kind = K::kSoftBounce;
  else if (type == "spamreport")
    out.kind = K::kComplaint;
  else if (type == "unsubscribe" || type == "group_unsubscribe")
    out.kind = K::kUnsubscribe;
  if (out.kind != K::kIgnored && out.email.empty())
    return Fail(Errc::kInvalidArgument, "email: is required (a string)");
  return out;
}

}  // namespace

const char* ToString(ProviderEventKind kind) {
  switch (kind) {
    case K::kDelivered:
      return "delivered";
    case K::kSoftBounce:
      return "soft_bounce";
    case K::kHardBounce:
      return "hard_bounce";
    case K::kComplaint:
      return "complaint";
    case K::kUnsubscribe:
      return "unsubscribe";
    case K::kIgnored:
      return "ignored";
  }
  return "ignored";
}

Result<int64_t> ParseUnixSeconds(std::string_view text) {
  int64_t v = 0;
  if (text.empty() || text.size() > 12)
    return Fail(Errc::kInvalidArgument, "timestamp: not unix seconds");
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v <= 0)
    return Fail(Errc::kInvalidArgument, "timestamp: not unix seconds");
  return v;
}

Result<MailgunSignature> MailgunSignatureOf(const json& body) {
  if (!body.is_object() || !body.contains("signature") || !body["signature"].is_object())
    return Fail(Errc::kInvalidArgument, "signature: is required (an object)");
  const json& s = body["signature"];
  MailgunSignature out{.timestamp = StringAt(s, "timestamp"),
                       .token = StringAt(s, "token"),
                       .signature = StringAt(s, "signature")};
  // Mailgun has sent the timestamp as a number in some payloads.
  if (out.timestamp.empty() && s.contains("timestamp") && s["timestamp"].is_number_integer())
    out.timestamp = std::to_string(s["timestamp"].get<int64_t>());
  if (out.timestamp.empty() || out.token.empty() || out.signature.empty())
    return Fail(Errc::kInvalidArgument, "signature: timestamp, token and signature are required");
  return out;
}

bool VerifyMailgun(std::string_view signing_key, const MailgunSignature& s) {
  if (signing_key.empty()) return false;
  std::string expected = crypto::Hex(crypto::HmacSha256(signing_key, s.timestamp + s.token));
  return crypto::ConstantTimeEqual(expected, s.signature);
}

Result<ProviderEvent> ParseMailgun(const json& body) {
  if (!body.contains("event-data") || !body["event-data"].is_object())
    return Fail(Errc::kInvalidArgument, "event-data: is required (an object)");
  const json& e = body["event-data"];
  std::string type = StringAt(e, "event");
  if (type.empty()) return Fail(Errc::kInvalidArgument, "event-data.event: is required");
  ProviderEvent out{
      .event_id = IdOf(e, "id"), .provider_type = type, .email = StringAt(e, "recipient")};
  if (e.contains("message") && e["message"].is_object() && e["message"].contains("headers"))
    out.message_id = StringAt(e["message"]["headers"], "message-id");
  if (type == "delivered")
    out.kind = K::kDelivered;
  else if (type == "failed")
    out.kind = StringAt(e, "severity") == "temporary" ? K::kSoftBounce : K::kHardBounce;
  else if (type == "complained")
    out.kind = K::kComplaint;
  else if (type == "unsubscribed")
    out.kind = K::kUnsubscribe;
  if (out.kind != K::kIgnored && out.email.empty())
    return Fail(Errc::kInvalidArgument, "event-data.recipient: is required (a string)");
  return out;
}

Result<ProviderEvent> ParsePostmark(const json& body) {
  if (!body.is_object()) return Fail(Errc::kInvalidArgument, "body: must be an object");
  std::string record = StringAt(body, "RecordType");
  if (record.empty()) return Fail(Errc::kInvalidArgument, "RecordType: is required (a string)");
  ProviderEvent out{
      .event_id = IdOf(body, "ID"), .provider_type = record, .message_id = PostmarkMessageId(body)};
  if (record == "Bounce") {
    out.provider_type = StringAt(body, "Type");
    out.kind = PostmarkBounceKind(out.provider_type);
    out.email = StringAt(body, "Email");
  } else if (record == "SpamComplaint") {
    out.kind = K::kComplaint;
    out.email = StringAt(body, "Email");
  } else if (record == "Delivery") {
    out.kind = K::kDelivered;
    out.email = StringAt(body, "Recipient");
  } else if (record == "SubscriptionChange") {
    // Only a recipient's own unsubscribe is theirs to apply; Postmark's suppressions for
    // bounces and complaints arrive as their own records.
    out.email = StringAt(body, "Recipient");
    if (body.value("SuppressSending", false) &&
        StringAt(body, "SuppressionReason") == "ManualSuppression")
      out.kind = K::kUnsubscribe;
  }
  if (out.kind != K::kIgnored && out.email.empty())
    return Fail(Errc::kInvalidArgument, "the recipient's address is required (Email/Recipient)");
  return out;
}

Status CheckSendGridKey(std::string_view public_key) {
  auto der = crypto::Base64Decode(public_key);
  if (!der) return Fail(Errc::kInvalidArgument, "public_key: not base64");
  const auto* p = reinterpret_cast<const unsigned char*>(der->data());
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      d2i_PUBKEY(nullptr, &p, static_cast<long>(der->size())), EVP_PKEY_free);
  if (!key || EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_EC || EVP_PKEY_get_bits(key.get()) != 256)
    return Fail(Errc::kInvalidArgument, "public_key: not a DER EC P-256 public key");
  return Ok();
}

bool VerifySendGrid(std::string_view public_key, std::string_view timestamp,
                    std::string_view raw_body, std::string_view signature_b64) {
  if (!CheckSendGridKey(public_key)) return false;
  auto der = crypto::Base64Decode(public_key);
  auto sig = crypto::Base64Decode(signature_b64);
  if (!der || !sig || sig->empty()) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(der->data());
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      d2i_PUBKEY(nullptr, &p, static_cast<long>(der->size())), EVP_PKEY_free);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!key || !ctx ||
      EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1)
    return false;
  std::string signed_text = std::string(timestamp) + std::string(raw_body);
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig->data()),
                          sig->size(), reinterpret_cast<const unsigned char*>(signed_text.data()),
                          signed_text.size()) == 1;
}

Result<std::vector<ProviderEvent>> ParseSendGrid(const json& body) {
  if (!body.is_array() || body.empty() || body.size() > 1000)
    return Fail(Errc::kInvalidArgument, "body: must be an array of 1 to 1000 events");
  std::vector<ProviderEvent> out;
  for (const auto& e : body) {
    auto one = ParseSendGridEvent(e);
    if (!one) return Fail(one.error());
    out.push_back(std::move(*one));
  }
  return out;
}

}  // namespace crmd::mail

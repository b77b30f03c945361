// Amazon SES notifications delivered by SNS (provider_events.h): the SNS message, its
// signature, the SNS host rule for URLs, and the SES notification inside.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "src/core/crypto.h"
#include "src/core/http_types.h"
#include "src/mail/provider_events.h"

namespace crmd::mail {
namespace {

using nlohmann::json;

std::string SnsString(const json& obj, const char* name) {
  if (!obj.is_object()) return "";
  auto it = obj.find(name);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

void AddSigned(std::string& out, const char* key, const std::string& value) {
  out += key;
  out += '\n';
  out += value;
  out += '\n';
}

// The original Message-ID of the message SES sent.
std::string SesMessageId(const json& mail) {
  if (!mail.is_object()) return "";
  if (mail.contains("commonHeaders")) {
    std::string id = SnsString(mail["commonHeaders"], "messageId");
    if (!id.empty()) return id;
  }
  if (mail.contains("headers") && mail["headers"].is_array())
    for (const auto& h : mail["headers"])
      if (http::IEquals(SnsString(h, "name"), "Message-ID")) return SnsString(h, "value");
  return "";
}

// The recipients' addresses of `list` (objects with emailAddress, or plain strings).
std::vector<std::string> SesRecipients(const json& section, const char* list) {
  std::vector<std::string> out;
  if (!section.is_object() || !section.contains(list) || !section[list].is_array()) return out;
  for (const auto& r : section[list]) {
    if (r.is_string())
      out.push_back(r.get<std::string>());
    else
      out.push_back(SnsString(r, "emailAddress"));
  }
  return out;
}

}  // namespace

Result<SnsMessage> ParseSns(const json& body) {
  if (!body.is_object()) return Fail(Errc::kInvalidArgument, "body: must be an object");
  SnsMessage m{.type = SnsString(body, "Type"),
               .message_id = SnsString(body, "MessageId"),
               .topic_arn = SnsString(body, "TopicArn"),
               .message = SnsString(body, "Message"),
               .timestamp = SnsString(body, "Timestamp"),
               .subscribe_url = SnsString(body, "SubscribeURL"),
               .token = SnsString(body, "Token"),
               .signature_version = SnsString(body, "SignatureVersion"),
               .signature = SnsString(body, "Signature"),
               .signing_cert_url = SnsString(body, "SigningCertURL")};
  if (body.contains("Subject") && body["Subject"].is_string())
    m.subject = body["Subject"].get<std::string>();
  bool confirmation = m.type == "SubscriptionConfirmation" || m.type == "UnsubscribeConfirmation";
  if (m.type != "Notification" && !confirmation)
    return Fail(Errc::kInvalidArgument, "Type: not an SNS message type");
  if (m.message_id.empty() || m.topic_arn.empty() || m.timestamp.empty() || m.signature.empty() ||
      m.signing_cert_url.empty() || (confirmation && (m.subscribe_url.empty() || m.token.empty())))
    return Fail(Errc::kInvalidArgument, "the members SNS signs are required");
  return m;
}

std::string SnsStringToSign(const SnsMessage& m) {
  std::string out;
  AddSigned(out, "Message", m.message);
  AddSigned(out, "MessageId", m.message_id);
  if (m.type == "Notification") {
    if (m.subject) AddSigned(out, "Subject", *m.subject);
  } else {
    AddSigned(out, "SubscribeURL", m.subscribe_url);
  }
  AddSigned(out, "Timestamp", m.timestamp);
  if (m.type != "Notification") AddSigned(out, "Token", m.token);
  AddSigned(out, "TopicArn", m.topic_arn);
  AddSigned(out, "Type", m.type);
  return out;
}

bool IsSnsUrl(std::string_view url) {
  constexpr std::string_view kScheme = "https://";
  if (url.substr(0, kScheme.size()) != kScheme) return false;
  std::string_view rest = url.substr(kScheme.size());
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return false;
  std::string host(rest.substr(0, slash));
  static const std::regex kSnsHost(R"(sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?)");
  return std::regex_match(host, kSnsHost);
}

bool VerifySns(std::string_view cert_pem, const SnsMessage& m) {
  const EVP_MD* md = m.signature_version == "1"   ? EVP_sha1()
                     : m.signature_version == "2" ? EVP_sha256()
                                                  : nullptr;
  auto sig = crypto::Base64Decode(m.signature);
  if (!md || !sig || sig->empty()) return false;
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr, X509_free);
  if (!cert) return false;
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(X509_get_pubkey(cert.get()),
                                                          EVP_PKEY_free);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!key || !ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key.get()) != 1)
    return false;
  std::string text = SnsStringToSign(m);
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig->data()),
                          sig->size(), reinterpret_cast<const unsigned char*>(text.data()),
                          text.size()) == 1;
}

Result<std::vector<ProviderEvent>> ParseSes(const SnsMessage& m) {
  json n = json::parse(m.message, nullptr, false);
  if (!n.is_object()) return Fail(Errc::kInvalidArgument, "Message: not an SES notification");
  std::string type = SnsString(n, "notificationType");
  if (type.empty()) type = SnsString(n, "eventType");
  if (type.empty()) return Fail(Errc::kInvalidArgument, "Message: notificationType is required");
  ProviderEventKind kind = ProviderEventKind::kIgnored;
  std::vector<std::string> recipients;
  if (type == "Bounce") {
    kind = SnsString(n["bounce"], "bounceType") == "Permanent" ? ProviderEventKind::kHardBounce
                                                               : ProviderEventKind::kSoftBounce;
    recipients = SesRecipients(n["bounce"], "bouncedRecipients");
  } else if (type == "Complaint") {
    kind = ProviderEventKind::kComplaint;
    recipients = SesRecipients(n["complaint"], "complainedRecipients");
  } else if (type == "Delivery") {
    kind = ProviderEventKind::kDelivered;
    recipients = SesRecipients(n["delivery"], "recipients");
  }
  std::string message_id = SesMessageId(n.contains("mail") ? n["mail"] : json());
  std::vector<ProviderEvent> out;
  if (recipients.empty())  // nothing to apply: one ignored event, so a replay is still seen
    return std::vector<ProviderEvent>{{.event_id = m.message_id + "/0",
                                       .kind = ProviderEventKind::kIgnored,
                                       .provider_type = type,
                                       .message_id = message_id}};
  for (size_t i = 0; i < recipients.size(); ++i) {
    if (kind != ProviderEventKind::kIgnored && recipients[i].empty())
      return Fail(Errc::kInvalidArgument, "Message: a recipient without emailAddress");
    out.push_back({.event_id = m.message_id + "/" + std::to_string(i),
                   .kind = kind,
                   .provider_type = type,
                   .email = recipients[i],
                   .message_id = message_id});
  }
  return out;
}

}  // namespace crmd::mail

#include "src/marketing/mail_receivers.h"

#include <cstdlib>
#include <regex>

#include "src/core/crypto.h"
#include "src/core/email_address.h"
#include "src/crm/contacts_repo.h"
#include "src/marketing/campaign_delivery.h"
#include "src/marketing/common.h"
#include "src/marketing/mail_receivers_repo.h"

namespace crmd::marketing {
namespace {

using nlohmann::json;
namespace repo = mail_receivers_repo;

// One answer for every refusal, so a caller learns nothing of what is configured.
constexpr const char* kReceiverRefused = "the request is not signed by a configured provider";

MailReceiver ReceiverOfRow(const repo::Row& r) {
  return MailReceiver{.provider = r.provider,
                      .has_signing_key = r.signing_key.has_value(),
                      .username = r.username,
                      .has_password = r.password_hash.has_value(),
                      .enabled = r.enabled,
                      .received_count = r.received_count,
                      .created_at = r.created_at,
                      .updated_at = r.updated_at,
                      .last_received_at = r.last_received_at,
                      .topic_arn = r.topic_arn};
}

Status CheckReceiverSecret(const char* field, const std::string& v) {
  if (v.size() < MailReceivers::kMinSecret || v.size() > MailReceivers::kMaxSecret)
    return Fail(Errc::kInvalidArgument, std::string(field) + ": must be 16 to 512 characters");
  for (unsigned char ch : v)
    if (ch < 0x21 || ch > 0x7e)
      return Fail(Errc::kInvalidArgument,
                  std::string(field) + ": printable ASCII without spaces only");
  return Ok();
}

// "Basic base64(user:password)" → (user, password).
std::optional<std::pair<std::string, std::string>> BasicCredentials(std::string_view header) {
  constexpr std::string_view kScheme = "Basic ";
  if (header.size() <= kScheme.size() || header.substr(0, kScheme.size()) != kScheme)
    return std::nullopt;
  auto decoded = crypto::Base64Decode(header.substr(kScheme.size()));
  if (!decoded) return std::nullopt;
  auto colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return std::make_pair(decoded->substr(0, colon), decoded->substr(colon + 1));
}

bool IsTopicArn(const std::string& arn) {
  static const std::regex kArn(
      R"(arn:aws(-cn|-us-gov)?:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?)");
  return std::regex_match(arn, kArn);
}

}  // namespace

json ToJson(const MailReceiver& r) {
  json j = {{"provider", r.provider},
            {"enabled", r.enabled},
            {"received_count", r.received_count},
            {"created_at", TimeJson(r.created_at)},
            {"updated_at", TimeJson(r.updated_at)},
            {"last_received_at", TimeJson(r.last_received_at)}};
  if (r.provider == "mailgun") j["has_signing_key"] = r.has_signing_key;
  if (r.provider == "sendgrid") j["has_public_key"] = r.has_signing_key;
  if (r.provider == "ses") j["topic_arn"] = r.topic_arn ? json(*r.topic_arn) : json(nullptr);
  if (r.provider == "postmark") {
    j["username"] = r.username ? json(*r.username) : json(nullptr);
    j["has_password"] = r.has_password;
  }
  return j;
}

Result<MailReceiverInput> MailReceiverInputFromJson(std::string_view provider, const json& j) {
  if (!j.is_object()) return Fail(Errc::kInvalidArgument, "body: must be an object");
  MailReceiverInput in;
  for (const auto& [k, v] : j.items()) {
    bool takes = k == "enabled" || (provider == "mailgun" && k == "signing_key") ||
                 (provider == "postmark" && (k == "username" || k == "password")) ||
                 (provider == "sendgrid" && k == "public_key") ||
                 (provider == "ses" && k == "topic_arn");
    if (!takes)
      return Fail(Errc::kInvalidArgument,
                  k + ": is not a setting of a " + std::string(provider) + " receiver");
    if (k == "enabled") {
      if (!v.is_boolean()) return Fail(Errc::kInvalidArgument, "enabled: must be a boolean");
      in.enabled = v.get<bool>();
      continue;
    }
    if (!v.is_string()) return Fail(Errc::kInvalidArgument, k + ": must be a string");
    std::string s = v.get<std::string>();
    if (k == "signing_key") in.signing_key = s;
    if (k == "username") in.username = s;
    if (k == "password") in.password = s;
    if (k == "public_key") in.public_key = s;
    if (k == "topic_arn") in.topic_arn = s;
  }
  return in;
}

bool MailReceivers::KnownProvider(std::string_view p) {
  return p == "mailgun" || p == "postmark" || p == "sendgrid" || p == "ses";
}

Result<MailReceiver> MailReceivers::Configure(const std::string& provider,
                                              const MailReceiverInput& in) {
  if (!KnownProvider(provider))
    return Fail(Errc::kInvalidArgument, "provider: must be mailgun, postmark, sendgrid or ses");
  if (in.signing_key)
    if (auto s = CheckReceiverSecret("signing_key", *in.signing_key); !s) return Fail(s.error());
  if (in.password)
    if (auto s = CheckReceiverSecret("password", *in.password); !s) return Fail(s.error());
  if (in.username && (in.username->empty() || in.username->size() > 200 ||
                      in.username->find(':') != std::string::npos))
    return Fail(Errc::kInvalidArgument, "username: 1 to 200 characters, no colon");
  if (in.public_key)
    if (auto s = mail::CheckSendGridKey(*in.public_key); !s) return Fail(s.error());
  if (in.topic_arn && !IsTopicArn(*in.topic_arn))
    return Fail(Errc::kInvalidArgument,
                "topic_arn: must be an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)");
  int64_t now = clock_.NowUnix();
  auto saved = db_.Write([&](store::Conn& c) -> Result<repo::Row> {
    auto found = repo::Find(c, provider);
    if (!found) return Fail(found.error());
    repo::Row r = found->value_or(repo::Row{.provider = provider, .created_at = now});
    if (in.signing_key) r.signing_key = *in.signing_key;
    if (in.public_key) r.signing_key = *in.public_key;
    if (in.username) r.username = *in.username;
    if (in.password) r.password_hash = crypto::HashSecret(*in.password);
    if (in.topic_arn) r.topic_arn = *in.topic_arn;
    if (in.enabled) r.enabled = *in.enabled;
    r.updated_at = now;
    if (provider == "mailgun" && !r.signing_key)
      return Fail(Errc::kInvalidArgument, "signing_key: is required");
    if (provider == "sendgrid" && !r.signing_key)
      return Fail(Errc::kInvalidArgument, "public_key: is required");
    if (provider == "ses" && !r.topic_arn)
      return Fail(Errc::kInvalidArgument, "topic_arn: is required");
    if (provider == "postmark" && !r.username)
      return Fail(Errc::kInvalidArgument, "username: is required");
    if (provider == "postmark" && !r.password_hash)
      return Fail(Errc::kInvalidArgument, "password: is required");
    if (auto s = repo::Save(c, r); !s) return Fail(s.error());
    return r;
  });
  if (!saved) return Fail(saved.error());
  return ReceiverOfRow(*saved);
}

Result<std::vector<MailReceiver>> MailReceivers::List() {
  auto rows = db_.Read([](store::Conn& c) { return repo::List(c); });
  if (!rows) return Fail(rows.error());
  std::vector<MailReceiver> out;
  for (const auto& r : *rows) out.push_back(ReceiverOfRow(r));
  return out;
}

Result<MailReceiver> MailReceivers::Get(const std::string& provider) {
  auto row = db_.Read([&](store::Conn& c) { return repo::Find(c, provider); });
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::NotFound("no " + provider + " receiver is configured"));
  return ReceiverOfRow(**row);
}

Status MailReceivers::Delete(const std::string& provider) {
  auto gone = db_.Write([&](store::Conn& c) { return repo::Delete(c, provider); });
  if (!gone) return Fail(gone.error());
  if (!*gone) return Fail(Error::NotFound("no " + provider + " receiver is configured"));
  return Ok();
}

struct MailReceivers::Stored {
  repo::Row row;
};

Result<MailReceivers::Stored> MailReceivers::Authenticating(const std::string& provider) {
  auto row = db_.Read([&](store::Conn& c) { return repo::Find(c, provider); });
  if (!row) return Fail(row.error());
  if (!*row || !(*row)->enabled) return Fail(Errc::kUnauthenticated, kReceiverRefused);
  return Stored{std::move(**row)};
}

Status MailReceivers::CheckTimestamp(std::string_view timestamp) const {
  auto t = mail::ParseUnixSeconds(timestamp);
  if (!t || std::llabs(clock_.NowUnix() - *t) > policy_.window_s)
    return Fail(Errc::kUnauthenticated, "the signed timestamp is missing or too old");
  return Ok();
}

Result<json> MailReceivers::ReceiveMailgun(const ReceiverRequest& req) {
  auto stored = Authenticating("mailgun");
  if (!stored) return Fail(stored.error());
  auto sig = mail::MailgunSignatureOf(*req.body);
  if (!sig || !mail::VerifyMailgun(stored->row.signing_key.value_or(""), *sig))
    return Fail(Errc::kUnauthenticated, kReceiverRefused);
  if (auto s = CheckTimestamp(sig->timestamp); !s) return Fail(s.error());
  auto event = mail::ParseMailgun(*req.body);
  if (!event) return Fail(event.error());
  return Apply("mailgun", "token:" + crypto::Sha256Hex(sig->token), {*event}, req.request_id);
}

Result<json> MailReceivers::ReceivePostmark(const ReceiverRequest& req) {
  auto stored = Authenticating("postmark");
  if (!stored) return Fail(stored.error());
  auto creds = req.authorization ? BasicCredentials(*req.authorization) : std::nullopt;
  // Both compared every time, in constant time, so neither answers sooner than the other.
  bool user_ok =
      creds && crypto::ConstantTimeEqual(creds->first, stored->row.username.value_or(""));
  bool password_ok =
      creds && crypto::VerifySecret(creds->second, stored->row.password_hash.value_or(""));
  if (!user_ok || !password_ok) return Fail(Errc::kUnauthenticated, kReceiverRefused);
  auto event = mail::ParsePostmark(*req.body);
  if (!event) return Fail(event.error());
  return Apply("postmark", "", {*event}, req.request_id);
}

Result<json> MailReceivers::ReceiveSendGrid(const ReceiverRequest& req) {
  auto stored = Authenticating("sendgrid");
  if (!stored) return Fail(stored.error());
  if (!req.signature_header || !req.timestamp_header ||
      !mail::VerifySendGrid(stored->row.signing_key.value_or(""), *req.timestamp_header,
                            req.raw_body, *req.signature_header))
    return Fail(Errc::kUnauthenticated, kReceiverRefused);
  if (auto s = CheckTimestamp(*req.timestamp_header); !s) return Fail(s.error());
  auto events = mail::ParseSendGrid(*req.body);
  if (!events) return Fail(events.error());
  return Apply("sendgrid", "", *events, req.request_id);
}

Result<json> MailReceivers::Apply(const std::string& provider, const std::string& once_key,
                                  const std::vector<mail::ProviderEvent>& events,
                                  const std::string& request_id) {
  int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<json> {
    if (auto s = repo::Prune(c, now - policy_.retention_s); !s) return Fail(s.error());
    if (auto s = repo::CountReceived(c, provider, now); !s) return Fail(s.error());
    if (!once_key.empty()) {
      auto fresh = repo::MarkProcessed(c, provider, once_key, now);
      if (!fresh) return Fail(fresh.error());
      if (!*fresh)
        return json{{"received", events.size()}, {"duplicate", true}, {"results", json::array()}};
    }
    json results = json::array();
    for (const auto& e : events) {
      auto fresh = repo::MarkProcessed(c, provider, e.event_id, now);
      if (!fresh) return Fail(fresh.error());
      if (!*fresh) {
        results.push_back({{"event_id", e.event_id},
                           {"type", mail::ToString(e.kind)},
                           {"applied", false},
                           {"duplicate", true}});
        continue;
      }
      auto one = ApplyOne(c, provider, e, request_id);
      if (!one) return Fail(one.error());
      results.push_back(std::move(*one));
    }
    return json{{"received", events.size()}, {"duplicate", false}, {"results", results}};
  });
}

Result<MailReceivers::SoftBounceLimit> MailReceivers::SoftBounceLimitIn(store::Conn& c) {
  SoftBounceLimit limit;
  if (!settings_) return limit;
  auto s = settings_->SharedIn(c);
  if (!s) return Fail(s.error());
  const json v = (*s)->document.value("soft_bounce_limit", json::object());
  limit.count = v.value("count", limit.count);
  limit.days = v.value("days", limit.days);
  return limit;
}

Result<json> MailReceivers::ApplyOne(store::Conn& c, const std::string& provider,
                                     const mail::ProviderEvent& e, const std::string& request_id) {
  using K = mail::ProviderEventKind;
  json out = {{"event_id", e.event_id}, {"type", mail::ToString(e.kind)}, {"duplicate", false}};
  if (e.kind == K::kDelivered || e.kind == K::kIgnored) {
    out["applied"] = false;
    out["reason"] = "accepted; crmd applies nothing for this event";
    return out;
  }
  auto normalised = NormalizeEmail(e.email);
  if (!normalised) {
    out["applied"] = false;
    out["reason"] = "the recipient is not an email address";
    return out;
  }
  if (e.kind == K::kSoftBounce) {
    auto found = crm::contacts_repo::FindContactByEmail(c, *normalised);
    if (!found) return Fail(found.error());
    out["applied"] = found->has_value();
    if (!*found) {
      out["reason"] = "no contact has this address";
      return out;
    }
    auto limit = SoftBounceLimitIn(c);
    if (!limit) return Fail(limit.error());
    auto n = repo::CountSoftBounce(c, (*found)->id, clock_.NowUnix(), limit->days * 86400);
    if (!n) return Fail(n.error());
    out["contact_id"] = (*found)->id;
    out["soft_bounces"] = *n;
    if (*n < limit->count) return out;
  }
  governance::Actor actor{.kind = "mail_receiver", .subject = provider, .request_id = request_id};
  if (e.kind == K::kSoftBounce) {
    // Enough soft bounces within the window: the address is as good as gone.
    auto applied = delivery_.FeedbackIn(c, actor, *normalised, "bounce", e.message_id);
    if (!applied) return Fail(applied.error());
    out.update(*applied);
    out["hard_bounce"] = true;
    return out;
  }
  const char* type = e.kind == K::kHardBounce  ? "bounce"
                     : e.kind == K::kComplaint ? "complaint"
                                               : "unsubscribe";
  auto applied = delivery_.FeedbackIn(c, actor, *normalised, type, e.message_id);
  if (!applied) return Fail(applied.error());
  out.update(*applied);
  out["applied"] = true;
  return out;
}

Result<std::string> MailReceivers::SnsCertificate(const std::string& url) {
  {
    std::lock_guard<std::mutex> lock(certs_mu_);
    if (auto it = certs_.find(url); it != certs_.end()) return it->second;
  }
  if (!http_) return Fail(Errc::kUnavailable, "no HTTP client to fetch the SNS certificate");
  auto got = http_->Send({.url = url, .max_response_bytes = 64 * 1024});
  if (!got || got->status != 200 ||
      got->body.find("-----BEGIN CERTIFICATE-----") == std::string::npos)
    return Fail(Errc::kUnavailable, "the SNS signing certificate could not be fetched");
  std::lock_guard<std::mutex> lock(certs_mu_);
  if (certs_.size() >= 32) certs_.clear();  // SNS rotates rarely; a bound all the same
  certs_[url] = got->body;
  return got->body;
}

Result<json> MailReceivers::ConfirmSnsSubscription(const std::string& subscribe_url) {
  if (!http_) return Fail(Errc::kUnavailable, "no HTTP client to confirm the subscription");
  auto got = http_->Send({.url = subscribe_url, .max_response_bytes = 64 * 1024});
  if (!got || got->status != 200)
    return Fail(Errc::kUnavailable, "the SNS subscription could not be confirmed");
  return json{{"confirmed", true}};
}

Result<json> MailReceivers::ReceiveSes(const ReceiverRequest& req) {
  auto stored = Authenticating("ses");
  if (!stored) return Fail(stored.error());
  auto m = mail::ParseSns(*req.body);
  // Only a message of the configured topic whose certificate is Amazon's own is looked at.
  if (!m || m->topic_arn != stored->row.topic_arn.value_or("") ||
      !mail::IsSnsUrl(m->signing_cert_url))
    return Fail(Errc::kUnauthenticated, kReceiverRefused);
  auto cert = SnsCertificate(m->signing_cert_url);
  if (!cert) return Fail(cert.error());
  if (!mail::VerifySns(*cert, *m)) return Fail(Errc::kUnauthenticated, kReceiverRefused);
  if (m->type == "SubscriptionConfirmation") {
    if (!mail::IsSnsUrl(m->subscribe_url)) return Fail(Errc::kUnauthenticated, kReceiverRefused);
    return ConfirmSnsSubscription(m->subscribe_url);
  }
  if (m->type != "Notification")
    return json{{"received", 0}, {"duplicate", false}, {"results", json::array()}};
  auto events = mail::ParseSes(*m);
  if (!events) return Fail(events.error());
  return Apply("ses", "", *events, req.request_id);
}

}  // namespace crmd::marketing

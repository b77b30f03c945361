// The Mailgun receiver (POST /mail/events/mailgun) against a real crmd: payloads shaped as
// Mailgun documents its webhooks ({"signature": {timestamp, token, signature},
// "event-data": {...}}), signed here with HMAC-SHA256(timestamp + token) under a key the
// test makes. Applied events, refusals with nothing recorded, replays, stale timestamps,
// and the admin routes that never show the key.
#include <gtest/gtest.h>

#include "src/core/crypto.h"
#include "src/governance/settings.h"
#include "tests/integration/rest/mail_receivers_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using nlohmann::json;

const std::string kMailgunSigningKey = "key-3ax6xnjp29jd6fds4gc373sgvjxteol0";
const std::string kMailgunPath = Url("/mail/events/mailgun");

struct Mailgun : ReceiverFixture {
  Mailgun() {
    auto r = Configure("mailgun", {{"signing_key", kMailgunSigningKey}});
    EXPECT_EQ(r.status, 200) << r.body;
  }

  // The event-data of a documented sample: `event` is Mailgun's name ("failed", ...).
  static json EventData(const std::string& event, const std::string& recipient,
                        const std::string& id, const std::string& severity = "") {
    json e = {{"event", event},
              {"id", id},
              {"timestamp", 1521472262.908181},
              {"log-level", event == "failed" ? "error" : "info"},
              {"recipient", recipient},
              {"recipient-domain", "example.com"},
              {"message",
               {{"headers",
                 {{"to", recipient},
                  {"message-id", "20130503182626.18666.16540@example.org"},
                  {"from", "news@example.org"},
                  {"subject", "Spring news"}}},
                {"size", 111}}},
              {"tags", json::array()},
              {"user-variables", json::object()}};
    if (!severity.empty()) {
      e["severity"] = severity;
      e["reason"] = severity == "permanent" ? "bounce" : "generic";
      e["delivery-status"] = {{"code", severity == "permanent" ? 550 : 452},
                              {"message", "mailbox unavailable"}};
    }
    return e;
  }

  static json Signed(const json& event_data, int64_t timestamp, const std::string& token,
                     const std::string& key = kMailgunSigningKey) {
    std::string ts = std::to_string(timestamp);
    return {{"signature",
             {{"timestamp", ts},
              {"token", token},
              {"signature", crypto::Hex(crypto::HmacSha256(key, ts + token))}}},
            {"event-data", event_data}};
  }

  http::ClientResponse Post(const json& body) { return server.PostJson(kMailgunPath, body); }
};

std::string MailgunToken(int n) {
  std::string t = "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0";
  return t.substr(0, t.size() - 4) + std::to_string(1000 + n);
}

TEST(MailgunReceiver, SignedEventsAreAppliedToContactsAndTheSuppressionList) {
  Mailgun f;
  int64_t hard = f.Subscriber("hard@example.com");
  f.Subscriber("spam@example.com");
  f.Subscriber("leaver@example.com");
  int64_t soft = f.Subscriber("soft@example.com");
  int64_t now = f.Now();

  auto r = f.Post(
      Mailgun::Signed(Mailgun::EventData("failed", "Hard@Example.com", "evt-hard", "permanent"),
                      now, MailgunToken(1)));
  ASSERT_EQ(r.status, 200) << r.body;
  json body = JsonBody(r);
  EXPECT_EQ(body["results"][0]["type"], "hard_bounce") << r.body;
  EXPECT_EQ(body["results"][0]["applied"], true) << r.body;
  EXPECT_EQ(body["results"][0]["contact_id"], hard) << r.body;
  EXPECT_EQ(f.StatusOf("hard@example.com"), "bounced");
  EXPECT_EQ(f.SuppressedFor("hard@example.com"), "hard_bounce");

  r = f.Post(Mailgun::Signed(Mailgun::EventData("complained", "spam@example.com", "evt-spam"), now,
                             MailgunToken(2)));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(f.StatusOf("spam@example.com"), "complained");
  EXPECT_EQ(f.SuppressedFor("spam@example.com"), "complaint");

  r = f.Post(Mailgun::Signed(Mailgun::EventData("unsubscribed", "leaver@example.com", "evt-unsub"),
                             now, MailgunToken(3)));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(f.StatusOf("leaver@example.com"), "unsubscribed");

  // A temporary failure is counted for the contact and changes nothing else.
  r = f.Post(
      Mailgun::Signed(Mailgun::EventData("failed", "soft@example.com", "evt-soft", "temporary"),
                      now, MailgunToken(4)));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["type"], "soft_bounce") << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["soft_bounces"], 1) << r.body;
  EXPECT_EQ(f.StatusOf("soft@example.com"), "subscribed");
  EXPECT_EQ(f.SuppressedFor("soft@example.com"), "");
  EXPECT_EQ(f.SoftBounces(soft), 1);

  // Delivered: accepted, nothing to apply.
  r = f.Post(Mailgun::Signed(Mailgun::EventData("delivered", "soft@example.com", "evt-ok"), now,
                             MailgunToken(5)));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["type"], "delivered");
  EXPECT_EQ(JsonBody(r)["results"][0]["applied"], false);
  EXPECT_EQ(f.StatusOf("soft@example.com"), "subscribed");

  // A hard bounce for an address no contact holds: suppressed all the same.
  r = f.Post(
      Mailgun::Signed(Mailgun::EventData("failed", "gone@example.com", "evt-gone", "permanent"),
                      now, MailgunToken(6)));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["suppressed"], true) << r.body;
  EXPECT_EQ(f.SuppressedFor("gone@example.com"), "hard_bounce");

  auto listed = f.server.Get(Url("/admin/mail-receivers/mailgun"), Bearer(f.admin));
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(JsonBody(listed)["received_count"], 6) << listed.body;
}

TEST(MailgunReceiver, SoftBouncesUpToTheSettingsLimitMakeAHardBounce) {
  Mailgun f;
  int64_t soft = f.Subscriber("soft@example.com");
  auto& settings = *f.server.app().services().governance->settings;
  auto doc = settings.Get();
  ASSERT_TRUE(doc) << doc.error().message;
  // A value outside its range is refused, naming it.
  auto bad = settings.Update({.kind = "cli", .subject = "test"}, doc->revision,
                             {{"soft_bounce_limit", {{"count", 0}}}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("soft_bounce_limit.count"), std::string::npos);
  ASSERT_TRUE(settings.Update({.kind = "cli", .subject = "test"}, doc->revision,
                              {{"soft_bounce_limit", {{"count", 2}, {"days", 7}}}}));
  int64_t now = f.Now();
  auto r = f.Post(
      Mailgun::Signed(Mailgun::EventData("failed", "soft@example.com", "evt-s1", "temporary"), now,
                      MailgunToken(11)));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["soft_bounces"], 1) << r.body;
  EXPECT_EQ(f.StatusOf("soft@example.com"), "subscribed");
  // The second within the window: the address is treated as gone for good.
  r = f.Post(
      Mailgun::Signed(Mailgun::EventData("failed", "soft@example.com", "evt-s2", "temporary"), now,
                      MailgunToken(12)));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["soft_bounces"], 2) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["hard_bounce"], true) << r.body;
  EXPECT_EQ(f.StatusOf("soft@example.com"), "bounced");
  EXPECT_EQ(f.SuppressedFor("soft@example.com"), "hard_bounce");
  EXPECT_EQ(f.SoftBounces(soft), 2);
}

TEST(MailgunReceiver, OneClientAddressIsLimitedPerMinuteBeforeTheSignatureIsChecked) {
  Mailgun f;
  json event = Mailgun::EventData("failed", "x@example.com", "evt-flood", "permanent");
  int refused = 0, limited = 0;
  for (int i = 0; i < 1201; ++i) {
    auto r = f.Post({{"event-data", event}});
    if (r.status == 401) ++refused;
    if (r.status == 429) {
      ++limited;
      EXPECT_TRUE(r.Header("Retry-After").has_value());
      EXPECT_EQ(JsonBody(r).value("code", ""), "rate_limited") << r.body;
    }
  }
  EXPECT_EQ(refused, 1200);
  EXPECT_EQ(limited, 1);
  EXPECT_EQ(f.ProcessedEvents(), 0);
}

TEST(MailgunReceiver, UnsignedOrWronglySignedIsRefusedWithProblemJsonAndNothingRecorded) {
  Mailgun f;
  f.Subscriber("hard@example.com");
  int64_t now = f.Now();
  json event = Mailgun::EventData("failed", "hard@example.com", "evt-1", "permanent");
  int64_t suppressions = f.Suppressions();

  json unsigned_body = {{"event-data", event}};
  json wrong_key =
      Mailgun::Signed(event, now, MailgunToken(1), "key-not-the-configured-one-at-all");
  json tampered = Mailgun::Signed(event, now, MailgunToken(2));
  tampered["signature"]["token"] = MailgunToken(3);  // the signature covers the token
  json no_signature_value = Mailgun::Signed(event, now, MailgunToken(4));
  no_signature_value["signature"].erase("signature");
  for (const json& body : {unsigned_body, wrong_key, tampered, no_signature_value}) {
    auto r = f.Post(body);
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_TRUE(IsProblem(r)) << r.body;
    EXPECT_EQ(JsonBody(r).value("code", ""), "invalid_signature") << r.body;
    EXPECT_EQ(r.body.find(kMailgunSigningKey), std::string::npos);
  }
  EXPECT_EQ(f.StatusOf("hard@example.com"), "subscribed");
  EXPECT_EQ(f.ProcessedEvents(), 0);
  EXPECT_EQ(f.Suppressions(), suppressions);
  EXPECT_EQ(f.Count("SELECT received_count FROM mail_receivers WHERE provider = 'mailgun'"), 0);

  // A disabled receiver refuses its own correctly signed events.
  ASSERT_EQ(f.Configure("mailgun", {{"enabled", false}}).status, 200);
  auto r = f.Post(Mailgun::Signed(event, now, MailgunToken(5)));
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(f.StatusOf("hard@example.com"), "subscribed");
  EXPECT_EQ(f.ProcessedEvents(), 0);
}

TEST(MailgunReceiver, AReplayIsAnsweredAndAppliedOnce) {
  Mailgun f;
  int64_t soft = f.Subscriber("soft@example.com");
  int64_t now = f.Now();
  json body =
      Mailgun::Signed(Mailgun::EventData("failed", "soft@example.com", "evt-soft", "temporary"),
                      now, MailgunToken(1));

  auto first = f.Post(body);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(JsonBody(first)["duplicate"], false);
  // The same request again (its token is single-use): 200, nothing applied.
  auto again = f.Post(body);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(JsonBody(again)["duplicate"], true) << again.body;
  EXPECT_EQ(f.SoftBounces(soft), 1);

  // The same event id under a fresh token (a provider's retry): not applied again.
  auto retry = f.Post(
      Mailgun::Signed(Mailgun::EventData("failed", "soft@example.com", "evt-soft", "temporary"),
                      now, MailgunToken(2)));
  ASSERT_EQ(retry.status, 200) << retry.body;
  EXPECT_EQ(JsonBody(retry)["results"][0]["duplicate"], true) << retry.body;
  EXPECT_EQ(JsonBody(retry)["results"][0]["applied"], false) << retry.body;
  EXPECT_EQ(f.SoftBounces(soft), 1);
  // Two tokens and one event id.
  EXPECT_EQ(f.ProcessedEvents(), 3);
}

TEST(MailgunReceiver, AStaleOrFutureTimestampIsRefused) {
  Mailgun f;
  f.Subscriber("hard@example.com");
  json event = Mailgun::EventData("failed", "hard@example.com", "evt-1", "permanent");
  for (int64_t at : {f.Now() - 3600, f.Now() + 3600}) {
    auto r = f.Post(Mailgun::Signed(event, at, MailgunToken(static_cast<int>(at % 1000))));
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_TRUE(IsProblem(r));
  }
  EXPECT_EQ(f.StatusOf("hard@example.com"), "subscribed");
  EXPECT_EQ(f.ProcessedEvents(), 0);
}

TEST(MailgunReceiver, AdminRoutesConfigureWithoutEverShowingTheKey) {
  ReceiverFixture f;
  // Not configured: refused like a bad signature.
  auto r = f.server.PostJson(
      kMailgunPath, Mailgun::Signed(Mailgun::EventData("delivered", "a@example.com", "e"), f.Now(),
                                    MailgunToken(1)));
  EXPECT_EQ(r.status, 401) << r.body;

  EXPECT_EQ(f.Configure("mailgun", {{"signing_key", "short"}}).status, 422);
  EXPECT_EQ(f.Configure("mailgun", json::object()).status, 422);  // a new one needs its key
  EXPECT_EQ(f.Configure("mailgun", {{"password", "x"}}).status, 422);
  EXPECT_EQ(f.Configure("ses-nope", {{"signing_key", kMailgunSigningKey}}).status, 404);
  auto made = f.Configure("mailgun", {{"signing_key", kMailgunSigningKey}});
  ASSERT_EQ(made.status, 200) << made.body;
  EXPECT_EQ(JsonBody(made)["has_signing_key"], true);
  EXPECT_EQ(made.body.find(kMailgunSigningKey), std::string::npos);

  auto list = f.server.Get(Url("/admin/mail-receivers"), Bearer(f.admin));
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(JsonBody(list)["mail_receivers"].size(), 1u);
  EXPECT_EQ(list.body.find(kMailgunSigningKey), std::string::npos);
  // An integration key may not.
  EXPECT_EQ(f.server.Get(Url("/admin/mail-receivers"), Bearer(f.key)).status, 403);

  auto gone = f.server.Send("DELETE", Url("/admin/mail-receivers/mailgun"), "", Bearer(f.admin));
  EXPECT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(f.server.Get(Url("/admin/mail-receivers/mailgun"), Bearer(f.admin)).status, 404);
}

}  // namespace
}  // namespace crmd::resttest

// The SendGrid receiver (POST /mail/events/sendgrid) against a real crmd: batches shaped as
// SendGrid documents its Event Webhook, signed as its signed Event Webhook is (ECDSA P-256
// with SHA-256 over the timestamp header followed by the raw body, base64 DER) with a key
// pair the test generates; crmd holds only the public key. Applied events, refusals with
// nothing recorded (unsigned, another key, a changed body, another timestamp, a stale
// one), replays, and configuration refusals.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>

#include "src/core/crypto.h"
#include "tests/integration/rest/mail_receivers_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using nlohmann::json;

const std::string kSendGridPath = Url("/mail/events/sendgrid");

// A P-256 key pair made for the test: signs like SendGrid, answers the public key as
// SendGrid shows it (base64 of the DER SubjectPublicKeyInfo).
class TestSigningKey {
 public:
  TestSigningKey() : key_(EVP_EC_gen("P-256"), EVP_PKEY_free) { EXPECT_TRUE(key_); }

  std::string PublicKey() const {
    unsigned char* der = nullptr;
    int n = i2d_PUBKEY(key_.get(), &der);
    EXPECT_GT(n, 0);
    std::string out(reinterpret_cast<char*>(der), n);
    OPENSSL_free(der);
    return crypto::Base64Encode(out);
  }

  std::string Sign(const std::string& text) const {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    size_t len = 0;
    const auto* data = reinterpret_cast<const unsigned char*>(text.data());
    EXPECT_EQ(EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()), 1);
    EXPECT_EQ(EVP_DigestSign(ctx.get(), nullptr, &len, data, text.size()), 1);
    std::string sig(len, '\0');
    EXPECT_EQ(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, data,
                             text.size()),
              1);
    sig.resize(len);
    return crypto::Base64Encode(sig);
  }

 private:
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key_;
};

json Event(const std::string& type, const std::string& email, const std::string& id) {
  json e = {{"email", email},
            {"timestamp", 1513299569},
            {"smtp-id", "<14c5d75ce93.dfd.64b469@ismtpd-555>"},
            {"event", type},
            {"category", "cat facts"},
            {"sg_event_id", id},
            {"sg_message_id", "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0"}};
  if (type == "bounce") {
    e["reason"] = "500 unknown recipient";
    e["status"] = "5.0.0";
    e["type"] = "bounce";
  }
  if (type == "deferred") {
    e["response"] = "400 try again later";
    e["attempt"] = "5";
  }
  if (type == "delivered") e["response"] = "250 OK";
  if (type == "group_unsubscribe") e["asm_group_id"] = 10;
  return e;
}

struct SendGrid : ReceiverFixture {
  SendGrid() {
    auto r = Configure("sendgrid", {{"public_key", key.PublicKey()}});
    EXPECT_EQ(r.status, 200) << r.body;
  }
  http::ClientResponse PostRaw(const std::string& raw, http::Headers headers) {
    headers.emplace_back("Content-Type", "application/json");
    return server.Send("POST", kSendGridPath, raw, std::move(headers));
  }
  http::Headers SignedHeaders(const std::string& raw, int64_t at, const TestSigningKey& by) {
    std::string ts = std::to_string(at);
    return {{"X-Twilio-Email-Event-Webhook-Signature", by.Sign(ts + raw)},
            {"X-Twilio-Email-Event-Webhook-Timestamp", ts}};
  }
  http::ClientResponse PostSigned(const json& batch) {
    std::string raw = batch.dump();
    return PostRaw(raw, SignedHeaders(raw, Now(), key));
  }

  TestSigningKey key;
};

TEST(SendGridReceiver, ASignedBatchIsAppliedEventByEvent) {
  SendGrid f;
  int64_t hard = f.Subscriber("hard@example.com");
  f.Subscriber("spam@example.com");
  f.Subscriber("leaver@example.com");
  f.Subscriber("group@example.com");
  int64_t soft = f.Subscriber("soft@example.com");
  json blocked = Event("bounce", "soft@example.com", "sg-blocked");
  blocked["type"] = "blocked";

  auto r = f.PostSigned(json::array({Event("processed", "hard@example.com", "sg-processed"),
                                     Event("bounce", "hard@example.com", "sg-bounce"),
                                     Event("spamreport", "spam@example.com", "sg-spam"),
                                     Event("unsubscribe", "leaver@example.com", "sg-unsub"),
                                     Event("group_unsubscribe", "group@example.com", "sg-group"),
                                     Event("deferred", "soft@example.com", "sg-deferred"), blocked,
                                     Event("delivered", "soft@example.com", "sg-delivered"),
                                     Event("open", "soft@example.com", "sg-open")}));
  ASSERT_EQ(r.status, 200) << r.body;
  json results = JsonBody(r)["results"];
  ASSERT_EQ(results.size(), 9u) << r.body;
  EXPECT_EQ(results[0]["type"], "ignored");
  EXPECT_EQ(results[1]["type"], "hard_bounce");
  EXPECT_EQ(results[1]["contact_id"], hard);
  EXPECT_EQ(results[5]["type"], "soft_bounce");
  EXPECT_EQ(results[6]["type"], "soft_bounce");
  EXPECT_EQ(results[7]["type"], "delivered");
  EXPECT_EQ(results[8]["type"], "ignored");

  EXPECT_EQ(f.StatusOf("hard@example.com"), "bounced");
  EXPECT_EQ(f.SuppressedFor("hard@example.com"), "hard_bounce");
  EXPECT_EQ(f.StatusOf("spam@example.com"), "complained");
  EXPECT_EQ(f.SuppressedFor("spam@example.com"), "complaint");
  EXPECT_EQ(f.StatusOf("leaver@example.com"), "unsubscribed");
  EXPECT_EQ(f.StatusOf("group@example.com"), "unsubscribed");
  EXPECT_EQ(f.StatusOf("soft@example.com"), "subscribed");
  EXPECT_EQ(f.SuppressedFor("soft@example.com"), "");
  EXPECT_EQ(f.SoftBounces(soft), 2);
}

TEST(SendGridReceiver, UnsignedOrWronglySignedBatchesAreRefusedAndNothingRecorded) {
  SendGrid f;
  f.Subscriber("hard@example.com");
  int64_t suppressions = f.Suppressions();
  const std::string raw = json::array({Event("bounce", "hard@example.com", "sg-1")}).dump();
  TestSigningKey stranger;
  const int64_t now = f.Now();

  http::Headers other_key = f.SignedHeaders(raw, now, stranger);
  std::string changed = raw;
  changed.replace(changed.find("500 unknown"), 3, "550");
  http::Headers other_time = f.SignedHeaders(raw, now, f.key);
  other_time[1].second = std::to_string(now - 1);
  http::Headers no_timestamp = {f.SignedHeaders(raw, now, f.key)[0]};
  http::Headers garbage = {{"X-Twilio-Email-Event-Webhook-Signature", "bm90IGEgc2lnbmF0dXJl"},
                           {"X-Twilio-Email-Event-Webhook-Timestamp", std::to_string(now)}};
  struct Case {
    std::string body;
    http::Headers headers;
  };
  for (const Case& c :
       {Case{raw, {}}, Case{raw, other_key}, Case{changed, f.SignedHeaders(raw, now, f.key)},
        Case{raw, other_time}, Case{raw, no_timestamp}, Case{raw, garbage},
        Case{raw, f.SignedHeaders(raw, now - 3600, f.key)}}) {
    auto r = f.PostRaw(c.body, c.headers);
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_TRUE(IsProblem(r)) << r.body;
    EXPECT_EQ(JsonBody(r).value("code", ""), "invalid_signature") << r.body;
  }
  EXPECT_EQ(f.StatusOf("hard@example.com"), "subscribed");
  EXPECT_EQ(f.ProcessedEvents(), 0);
  EXPECT_EQ(f.Suppressions(), suppressions);
  EXPECT_EQ(f.Count("SELECT received_count FROM mail_receivers WHERE provider = 'sendgrid'"), 0);
}

TEST(SendGridReceiver, AReplayedBatchIsAppliedOnce) {
  SendGrid f;
  int64_t soft = f.Subscriber("soft@example.com");
  json batch = json::array({Event("deferred", "soft@example.com", "sg-d1")});
  auto first = f.PostSigned(batch);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(JsonBody(first)["results"][0]["duplicate"], false);
  auto again = f.PostSigned(batch);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(JsonBody(again)["results"][0]["duplicate"], true) << again.body;
  EXPECT_EQ(f.SoftBounces(soft), 1);
  EXPECT_EQ(f.ProcessedEvents(), 1);
}

TEST(SendGridReceiver, OnlyAnEcP256PublicKeyIsTaken) {
  ReceiverFixture f;
  // Not configured: refused like a bad signature.
  EXPECT_EQ(
      f.server.PostJson(kSendGridPath, json::array({Event("open", "a@example.com", "x")})).status,
      401);
  EXPECT_EQ(f.Configure("sendgrid", {{"public_key", "not base64 at all!"}}).status, 422);
  EXPECT_EQ(
      f.Configure("sendgrid", {{"public_key", crypto::Base64Encode("0123456789abcdefgh")}}).status,
      422);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> rsa(EVP_RSA_gen(2048), EVP_PKEY_free);
  unsigned char* der = nullptr;
  int n = i2d_PUBKEY(rsa.get(), &der);
  std::string rsa_der(reinterpret_cast<char*>(der), n);
  OPENSSL_free(der);
  EXPECT_EQ(f.Configure("sendgrid", {{"public_key", crypto::Base64Encode(rsa_der)}}).status, 422);
  TestSigningKey key;
  auto made = f.Configure("sendgrid", {{"public_key", key.PublicKey()}});
  ASSERT_EQ(made.status, 200) << made.body;
  EXPECT_EQ(JsonBody(made)["has_public_key"], true);
}

}  // namespace
}  // namespace crmd::resttest

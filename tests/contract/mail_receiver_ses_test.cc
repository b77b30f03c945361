// The SES receiver (marketing::MailReceivers::ReceiveSes) on the engine the suite runs on
// (SQLite, and PostgreSQL as pg.*): SNS messages shaped as AWS documents them, signed with
// a key and self-signed certificate the test makes, the certificate served by a fake HTTP
// client at an SNS URL. Confirmation of a subscription, bounces and complaints applied,
// replays applied once, and refusals (another topic, a certificate URL off the SNS hosts,
// another signer, a changed message) that fetch nothing they should not and record nothing.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/core/crypto.h"
#include "src/core/http_client.h"
#include "src/core/random.h"
#include "src/crm/contacts_repo.h"
#include "src/crm/suppression.h"
#include "src/mail/provider_events.h"
#include "src/marketing/mail_receivers.h"
#include "tests/support/domain.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_database.h"
#include "tests/support/test_server.h"

namespace crmd::marketing {
namespace {

using nlohmann::json;

const std::string kTopic = "arn:aws:sns:us-west-2:123456789012:MyTopic";
const std::string kCertUrl =
    "https://sns.us-west-2.amazonaws.com/"
    "SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem";
const std::string kSubscribeUrl =
    "https://sns.us-west-2.amazonaws.com/"
    "?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token="
    "2336412f";

// An RSA key and a self-signed certificate for it, standing in for Amazon's.
class SnsSigner {
 public:
  SnsSigner() : key_(EVP_RSA_gen(2048), EVP_PKEY_free) {
    std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("sns.amazonaws.com"), -1, -1,
                               0);
    X509_set_issuer_name(cert.get(), name);
    X509_set_pubkey(cert.get(), key_.get());
    X509_sign(cert.get(), key_.get(), EVP_sha256());
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    PEM_write_bio_X509(bio.get(), cert.get());
    char* data = nullptr;
    long n = BIO_get_mem_data(bio.get(), &data);
    pem_.assign(data, n);
  }
  const std::string& pem() const { return pem_; }

  // Signs `m` as SNS does for its SignatureVersion ("1": SHA1, "2": SHA256).
  json Signed(mail::SnsMessage m, const json& body) const {
    std::string text = mail::SnsStringToSign(m);
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    EVP_DigestSignInit(ctx.get(), nullptr, m.signature_version == "1" ? EVP_sha1() : EVP_sha256(),
                       nullptr, key_.get());
    size_t len = 0;
    const auto* data = reinterpret_cast<const unsigned char*>(text.data());
    EVP_DigestSign(ctx.get(), nullptr, &len, data, text.size());
    std::string sig(len, '\0');
    EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, data,
                   text.size());
    sig.resize(len);
    json out = body;
    out["Signature"] = crypto::Base64Encode(sig);
    return out;
  }

 private:
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key_;
  std::string pem_;
};

// Serves the certificate at kCertUrl and 200 at kSubscribeUrl; records every URL asked.
class FakeSnsHttp final : public http::HttpClient {
 public:
  explicit FakeSnsHttp(std::string pem) : pem_(std::move(pem)) {}
  Result<http::ClientResponse> Send(const http::ClientRequest& r) override {
    asked.push_back(r.url);
    if (down) return Fail(Errc::kUnavailable, "down");
    if (r.url == kCertUrl) return http::ClientResponse{.status = 200, .body = pem_};
    if (r.url == kSubscribeUrl) return http::ClientResponse{.status = 200, .body = "<ok/>"};
    return http::ClientResponse{.status = 404};
  }
  std::vector<std::string> asked;
  bool down = false;

 private:
  std::string pem_;
};

// The body of an SNS message and the values it signs.
struct SnsBody {
  mail::SnsMessage m;
  json body;
};

SnsBody Notification(const std::string& message_id, const json& ses, const std::string& version,
                     const std::string& topic = kTopic, const std::string& cert = kCertUrl) {
  SnsBody b;
  b.m = {.type = "Notification",
         .message_id = message_id,
         .topic_arn = topic,
         .message = ses.dump(),
         .timestamp = "2012-05-02T00:54:06.655Z",
         .signature_version = version,
         .signing_cert_url = cert};
  b.body = {{"Type", b.m.type},
            {"MessageId", b.m.message_id},
            {"TopicArn", b.m.topic_arn},
            {"Message", b.m.message},
            {"Timestamp", b.m.timestamp},
            {"SignatureVersion", b.m.signature_version},
            {"SigningCertURL", b.m.signing_cert_url},
            {"UnsubscribeURL", "https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe"}};
  return b;
}

json SesBounce(const std::string& type, const std::string& email) {
  return {{"notificationType", "Bounce"},
          {"bounce",
           {{"bounceType", type},
            {"bounceSubType", "General"},
            {"bouncedRecipients",
             {{{"emailAddress", email},
               {"action", "failed"},
               {"status", "5.1.1"},
               {"diagnosticCode", "smtp; 550 5.1.1 user unknown"}}}},
            {"timestamp", "2016-01-27T14:59:38.237Z"},
            {"feedbackId", "00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa068a-000000"}}},
          {"mail",
           {{"timestamp", "2016-01-27T14:59:38.237Z"},
            {"messageId", "0000014644fe5ef6-9a483358-9170-4cb4-a269-f5dcdf415321-000000"},
            {"source", "john@example.com"},
            {"destination", {email}},
            {"commonHeaders", {{"messageId", "<c0ffee@acme.example>"}}}}}};
}

json SesComplaint(const std::string& email) {
  return {
      {"notificationType", "Complaint"},
      {"complaint",
       {{"complainedRecipients", {{{"emailAddress", email}}}},
        {"complaintFeedbackType", "abuse"},
        {"feedbackId", "0000013786031775-163e3910-53eb-4c8e-a04a-f29debf88a84-000000"}}},
      {"mail", {{"messageId", "0000013786031775-fea503bc-7497-49e1-881b-a0379bb037d3-000000"}}}};
}

class SesReceiver : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<crmd::testing::ScratchDatabase>(dir_.path() + "/ses.db");
    auto opened = store::Open(scratch_->url(), 2);
    ASSERT_TRUE(opened) << opened.error().message;
    db_ = std::move(*opened);
    auto d = crmd::testing::MakeDomain(*db_, clock_, random_);
    ASSERT_TRUE(d) << d.error().message;
    domain_ = std::move(*d);
    receivers_ = std::make_unique<MailReceivers>(*db_, clock_, *domain_->marketing->delivery,
                                                 ReceiverPolicy{}, &http_);
    ASSERT_TRUE(receivers_->Configure("ses", {.topic_arn = kTopic}));
  }

  void AddSubscriber(const std::string& email) {
    auto id = db_->Write([&](store::Conn& c) {
      return crm::contacts_repo::InsertContact(
          c, crm::Contact{.email = email, .status = "subscribed", .type = "lead", .revision = 1});
    });
    ASSERT_TRUE(id) << id.error().message;
  }
  std::string StatusOf(const std::string& email) {
    auto found =
        db_->Read([&](store::Conn& c) { return crm::contacts_repo::FindContactByEmail(c, email); });
    return found && *found ? (*found)->status : "(none)";
  }
  std::string SuppressedFor(const std::string& email) {
    auto hit = domain_->crm->suppressions->Check(email);
    return hit && *hit ? (*hit)->reason : "";
  }
  int64_t Processed() {
    auto n = db_->Read([](store::Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne("SELECT COUNT(*) FROM mail_receiver_events");
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    });
    return n.value_or(-1);
  }
  Result<json> Receive(const json& body) {
    return receivers_->ReceiveSes({.raw_body = body.dump(), .body = &body});
  }

  crmd::testing::TempDir dir_;
  std::unique_ptr<crmd::testing::ScratchDatabase> scratch_;
  std::unique_ptr<store::Database> db_;
  FakeClock clock_;
  SecureRandom random_;
  std::unique_ptr<crmd::testing::Domain> domain_;
  SnsSigner signer_;
  FakeSnsHttp http_{signer_.pem()};
  std::unique_ptr<MailReceivers> receivers_;
};

TEST_F(SesReceiver, ASignedSubscriptionConfirmationIsConfirmedAtItsSnsUrl) {
  mail::SnsMessage m{.type = "SubscriptionConfirmation",
                     .message_id = "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
                     .topic_arn = kTopic,
                     .message = "You have chosen to subscribe to the topic " + kTopic,
                     .timestamp = "2012-04-26T20:45:04.751Z",
                     .subscribe_url = kSubscribeUrl,
                     .token = "2336412f37",
                     .signature_version = "1",
                     .signing_cert_url = kCertUrl};
  json body = {
      {"Type", m.type},           {"MessageId", m.message_id}, {"Token", m.token},
      {"TopicArn", m.topic_arn},  {"Message", m.message},      {"SubscribeURL", m.subscribe_url},
      {"Timestamp", m.timestamp}, {"SignatureVersion", "1"},   {"SigningCertURL", kCertUrl}};
  auto done = Receive(signer_.Signed(m, body));
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ((*done)["confirmed"], true);
  EXPECT_EQ(http_.asked, (std::vector<std::string>{kCertUrl, kSubscribeUrl}));

  // A SubscribeURL elsewhere is never visited, however well signed.
  m.subscribe_url = "https://attacker.example/?Action=ConfirmSubscription";
  body["SubscribeURL"] = m.subscribe_url;
  auto refused = Receive(signer_.Signed(m, body));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::kUnauthenticated);
  EXPECT_EQ(http_.asked.size(), 2u);  // and the certificate came from the cache
}

TEST_F(SesReceiver, SignedBouncesAndComplaintsAreAppliedOnceEach) {
  AddSubscriber("hard@example.com");
  AddSubscriber("soft@example.com");
  AddSubscriber("spam@example.com");
  auto hard = Notification("msg-hard", SesBounce("Permanent", "hard@example.com"), "1");
  json hard_body = signer_.Signed(hard.m, hard.body);
  auto done = Receive(hard_body);
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ((*done)["results"][0]["event_id"], "msg-hard/0") << done->dump();
  EXPECT_EQ(StatusOf("hard@example.com"), "bounced");
  EXPECT_EQ(SuppressedFor("hard@example.com"), "hard_bounce");

  auto soft = Notification("msg-soft", SesBounce("Transient", "soft@example.com"), "2");
  done = Receive(signer_.Signed(soft.m, soft.body));
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ((*done)["results"][0]["type"], "soft_bounce");
  EXPECT_EQ(StatusOf("soft@example.com"), "subscribed");
  EXPECT_EQ(SuppressedFor("soft@example.com"), "");

  auto spam = Notification("msg-spam", SesComplaint("spam@example.com"), "2");
  done = Receive(signer_.Signed(spam.m, spam.body));
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(StatusOf("spam@example.com"), "complained");
  EXPECT_EQ(SuppressedFor("spam@example.com"), "complaint");

  // SNS delivers at least once: the same message again is answered and applied once.
  auto again = Receive(hard_body);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ((*again)["results"][0]["duplicate"], true) << again->dump();
  EXPECT_EQ(Processed(), 3);
  // One certificate URL, fetched once.
  EXPECT_EQ(http_.asked, std::vector<std::string>{kCertUrl});
}

TEST_F(SesReceiver, UnsignedOrForeignMessagesAreRefusedAndNothingRecorded) {
  AddSubscriber("hard@example.com");
  json ses = SesBounce("Permanent", "hard@example.com");
  SnsSigner stranger;

  auto other_topic = Notification("m1", ses, "1", "arn:aws:sns:us-west-2:999999999999:TheirTopic");
  auto off_host = Notification("m2", ses, "1", kTopic, "https://sns.evil.example/cert.pem");
  auto lookalike = Notification("m3", ses, "1", kTopic,
                                "https://sns.us-west-2.amazonaws.com.evil.example/c.pem");
  auto plain_http =
      Notification("m4", ses, "1", kTopic, "http://sns.us-west-2.amazonaws.com/c.pem");
  auto unsigned_body = Notification("m5", ses, "1").body;
  for (const json& body :
       {signer_.Signed(other_topic.m, other_topic.body), signer_.Signed(off_host.m, off_host.body),
        signer_.Signed(lookalike.m, lookalike.body), signer_.Signed(plain_http.m, plain_http.body),
        unsigned_body}) {
    auto r = Receive(body);
    ASSERT_FALSE(r) << body.dump();
    EXPECT_EQ(r.error().code, Errc::kUnauthenticated) << body.dump();
  }
  EXPECT_TRUE(http_.asked.empty());  // nothing was fetched for any of them

  auto n = Notification("m6", ses, "2");
  json by_stranger = stranger.Signed(n.m, n.body);
  json changed = signer_.Signed(n.m, n.body);
  changed["Message"] = SesBounce("Permanent", "someone-else@example.com").dump();
  json other_version = signer_.Signed(n.m, n.body);
  other_version["SignatureVersion"] = "1";
  for (const json& body : {by_stranger, changed, other_version}) {
    auto r = Receive(body);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::kUnauthenticated);
  }
  EXPECT_EQ(StatusOf("hard@example.com"), "subscribed");
  EXPECT_EQ(SuppressedFor("hard@example.com"), "");
  EXPECT_EQ(Processed(), 0);
}

TEST_F(SesReceiver, ACertificateThatCannotBeFetchedIsUnavailableNotAccepted) {
  AddSubscriber("hard@example.com");
  http_.down = true;
  auto n = Notification("m1", SesBounce("Permanent", "hard@example.com"), "1");
  auto r = Receive(signer_.Signed(n.m, n.body));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kUnavailable);
  EXPECT_EQ(StatusOf("hard@example.com"), "subscribed");
  EXPECT_EQ(Processed(), 0);
  // Once it can be fetched, SNS's retry goes through.
  http_.down = false;
  EXPECT_TRUE(Receive(signer_.Signed(n.m, n.body)));
  EXPECT_EQ(StatusOf("hard@example.com"), "bounced");
}

}  // namespace
}  // namespace crmd::marketing

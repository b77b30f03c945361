#include "src/mail/provider_events.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/unit/mail/python.h"

namespace crmd::mail {
namespace {

using nlohmann::json;
using testing::RunPython;

// Mailgun's signature made by Python's hmac module, not by crmd's code.
constexpr const char* kPythonHmac = R"PY(
import hmac, hashlib, sys
print(hmac.new(sys.argv[1].encode(), (sys.argv[2] + sys.argv[3]).encode(), hashlib.sha256).hexdigest())
)PY";

// A P-256 key and a signature over argv[2] made by the openssl command line: prints the
// base64 DER public key, then the base64 DER signature.
constexpr const char* kOpensslEcdsa = R"PY(
import base64, os, subprocess, sys
key = os.path.join(sys.argv[1], 'sendgrid.pem')
subprocess.run(['openssl', 'ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key], check=True)
der = subprocess.run(['openssl', 'ec', '-in', key, '-pubout', '-outform', 'DER'], check=True, capture_output=True).stdout
sig = subprocess.run(['openssl', 'dgst', '-sha256', '-sign', key], input=sys.argv[2].encode(), check=True, capture_output=True).stdout
print(base64.b64encode(der).decode())
print(base64.b64encode(sig).decode())
)PY";

TEST(Mailgun, VerifiesTheHmacOfTimestampAndTokenAsPythonComputesIt) {
  const std::string key = "key-3ax6xnjp29jd6fds4gc373sgvjxteol0";
  MailgunSignature s{.timestamp = "1529006854",
                     .token = "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"};
  auto py = RunPython(kPythonHmac, {key, s.timestamp, s.token});
  ASSERT_EQ(py.exit_code, 0) << py.output;
  s.signature = py.output.substr(0, 64);
  EXPECT_TRUE(VerifyMailgun(key, s));

  MailgunSignature other = s;
  other.timestamp = "1529006855";
  EXPECT_FALSE(VerifyMailgun(key, other));
  other = s;
  other.signature[10] = other.signature[10] == 'a' ? 'b' : 'a';
  EXPECT_FALSE(VerifyMailgun(key, other));
  EXPECT_FALSE(VerifyMailgun("", s));
  EXPECT_FALSE(VerifyMailgun(key + "x", s));
}

TEST(Mailgun, MapsEventsAndSeverities) {
  auto parse = [](json e) { return ParseMailgun(json{{"event-data", std::move(e)}}); };
  auto hard = parse({{"event", "failed"},
                     {"severity", "permanent"},
                     {"id", "E1"},
                     {"recipient", "a@example.com"},
                     {"message", {{"headers", {{"message-id", "x@example.org"}}}}}});
  ASSERT_TRUE(hard.has_value()) << hard.error().message;
  EXPECT_EQ(hard->kind, ProviderEventKind::kHardBounce);
  EXPECT_EQ(hard->event_id, "E1");
  EXPECT_EQ(hard->message_id, "x@example.org");
  EXPECT_EQ(
      parse({{"event", "failed"}, {"severity", "temporary"}, {"recipient", "a@example.com"}})->kind,
      ProviderEventKind::kSoftBounce);
  EXPECT_EQ(parse({{"event", "complained"}, {"recipient", "a@example.com"}})->kind,
            ProviderEventKind::kComplaint);
  EXPECT_EQ(parse({{"event", "unsubscribed"}, {"recipient", "a@example.com"}})->kind,
            ProviderEventKind::kUnsubscribe);
  EXPECT_EQ(parse({{"event", "opened"}})->kind, ProviderEventKind::kIgnored);
  // Without an id, a stable one derived from the event.
  json e = {{"event", "delivered"}, {"recipient", "a@example.com"}};
  EXPECT_EQ(parse(e)->event_id, parse(e)->event_id);
  EXPECT_EQ(parse(e)->event_id.rfind("sha256:", 0), 0u);
  // Refused: no event-data, no event, a bounce without a recipient.
  EXPECT_FALSE(ParseMailgun(json::object()).has_value());
  EXPECT_FALSE(parse({{"recipient", "a@example.com"}}).has_value());
  EXPECT_FALSE(parse({{"event", "failed"}, {"severity", "permanent"}}).has_value());
}

TEST(Mailgun, TheSignatureObjectNeedsAllThreeMembers) {
  EXPECT_FALSE(MailgunSignatureOf(json::object()).has_value());
  EXPECT_FALSE(MailgunSignatureOf({{"signature", {{"timestamp", "1"}, {"token", "t"}}}}));
  auto s = MailgunSignatureOf(
      {{"signature", {{"timestamp", 1529006854}, {"token", "t"}, {"signature", "ab"}}}});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->timestamp, "1529006854");
}

TEST(Postmark, MapsRecordTypesAndBounceTypes) {
  auto bounce = [](const std::string& type) {
    return ParsePostmark({{"RecordType", "Bounce"}, {"ID", 7}, {"Type", type}, {"Email", "a@b.c"}})
        ->kind;
  };
  EXPECT_EQ(bounce("HardBounce"), ProviderEventKind::kHardBounce);
  EXPECT_EQ(bounce("BadEmailAddress"), ProviderEventKind::kHardBounce);
  EXPECT_EQ(bounce("SoftBounce"), ProviderEventKind::kSoftBounce);
  EXPECT_EQ(bounce("Transient"), ProviderEventKind::kSoftBounce);
  EXPECT_EQ(bounce("SpamNotification"), ProviderEventKind::kComplaint);
  EXPECT_EQ(bounce("Subscribe"), ProviderEventKind::kIgnored);
  auto spam = ParsePostmark({{"RecordType", "SpamComplaint"}, {"ID", 8}, {"Email", "a@b.c"}});
  EXPECT_EQ(spam->kind, ProviderEventKind::kComplaint);
  EXPECT_EQ(spam->event_id, "8");
  auto change = ParsePostmark({{"RecordType", "SubscriptionChange"},
                               {"Recipient", "a@b.c"},
                               {"SuppressSending", true},
                               {"SuppressionReason", "ManualSuppression"},
                               {"Metadata", {{"crmd-message-id", "<m@x>"}}}});
  EXPECT_EQ(change->kind, ProviderEventKind::kUnsubscribe);
  EXPECT_EQ(change->message_id, "<m@x>");
  // A suppression Postmark made for a bounce is not the recipient's unsubscribe.
  EXPECT_EQ(ParsePostmark({{"RecordType", "SubscriptionChange"},
                           {"Recipient", "a@b.c"},
                           {"SuppressSending", true},
                           {"SuppressionReason", "HardBounce"}})
                ->kind,
            ProviderEventKind::kIgnored);
  EXPECT_FALSE(ParsePostmark({{"ID", 1}}).has_value());
  EXPECT_FALSE(ParsePostmark({{"RecordType", "Bounce"}, {"Type", "HardBounce"}}).has_value());
}

TEST(SendGrid, VerifiesASignatureTheOpensslCommandLineMade) {
  testing::TempDir dir;
  const std::string ts = "1600112502";
  const std::string body = R"([{"email":"a@example.com","event":"bounce","sg_event_id":"x"}])";
  auto py = RunPython(kOpensslEcdsa, {dir.path(), ts + body});
  ASSERT_EQ(py.exit_code, 0) << py.output;
  std::istringstream lines(py.output);
  std::string public_key, signature;
  std::getline(lines, public_key);
  std::getline(lines, signature);
  ASSERT_TRUE(CheckSendGridKey(public_key).has_value());
  EXPECT_TRUE(VerifySendGrid(public_key, ts, body, signature));
  EXPECT_FALSE(VerifySendGrid(public_key, "1600112503", body, signature));
  EXPECT_FALSE(VerifySendGrid(public_key, ts, body + " ", signature));
  EXPECT_FALSE(VerifySendGrid(public_key, ts, body, ""));
  EXPECT_FALSE(VerifySendGrid(public_key, ts, body, "%%%"));
  EXPECT_FALSE(VerifySendGrid("", ts, body, signature));
}

TEST(SendGrid, MapsEventsAndRefusesMalformedBatches) {
  auto one = [](json e) { return ParseSendGrid(json::array({std::move(e)})); };
  auto bounce =
      one({{"event", "bounce"}, {"email", "a@b.c"}, {"sg_event_id", "s1"}, {"smtp-id", "<m@x>"}});
  ASSERT_TRUE(bounce.has_value()) << bounce.error().message;
  EXPECT_EQ((*bounce)[0].kind, ProviderEventKind::kHardBounce);
  EXPECT_EQ((*bounce)[0].message_id, "<m@x>");
  EXPECT_EQ((*one({{"event", "bounce"}, {"type", "blocked"}, {"email", "a@b.c"}}))[0].kind,
            ProviderEventKind::kSoftBounce);
  EXPECT_EQ((*one({{"event", "spamreport"}, {"email", "a@b.c"}}))[0].kind,
            ProviderEventKind::kComplaint);
  EXPECT_EQ((*one({{"event", "processed"}, {"email", "a@b.c"}}))[0].kind,
            ProviderEventKind::kIgnored);
  EXPECT_FALSE(ParseSendGrid(json::object()).has_value());
  EXPECT_FALSE(ParseSendGrid(json::array()).has_value());
  EXPECT_FALSE(ParseSendGrid(json::array({1})).has_value());
  EXPECT_FALSE(one({{"event", "bounce"}}).has_value());
}

TEST(Sns, TheStringToSignFollowsTheDocumentedKeyOrder) {
  SnsMessage n{.type = "Notification",
               .message_id = "22b80b92",
               .topic_arn = "arn:aws:sns:us-west-2:123456789012:MyTopic",
               .message = "Hello world!",
               .timestamp = "2012-05-02T00:54:06.655Z",
               .subject = "My First Message"};
  EXPECT_EQ(SnsStringToSign(n),
            "Message\nHello world!\nMessageId\n22b80b92\nSubject\nMy First Message\n"
            "Timestamp\n2012-05-02T00:54:06.655Z\nTopicArn\n"
            "arn:aws:sns:us-west-2:123456789012:MyTopic\nType\nNotification\n");
  n.subject.reset();  // no Subject: no Subject key at all
  EXPECT_EQ(SnsStringToSign(n).find("Subject"), std::string::npos);
  SnsMessage c{.type = "SubscriptionConfirmation",
               .message_id = "1",
               .topic_arn = "t",
               .message = "m",
               .timestamp = "ts",
               .subscribe_url = "https://sns.us-west-2.amazonaws.com/?x",
               .token = "tok"};
  EXPECT_EQ(SnsStringToSign(c),
            "Message\nm\nMessageId\n1\nSubscribeURL\nhttps://sns.us-west-2.amazonaws.com/"
            "?x\nTimestamp\nts\nToken\ntok\nTopicArn\nt\nType\nSubscriptionConfirmation\n");
}

TEST(Sns, OnlyHttpsUrlsOnAnSnsHostAreFetched) {
  for (const char* ok : {"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem",
                         "https://sns.cn-north-1.amazonaws.com.cn/x.pem",
                         "https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription"})
    EXPECT_TRUE(IsSnsUrl(ok)) << ok;
  for (const char* bad :
       {"http://sns.us-east-1.amazonaws.com/x.pem",
        "https://sns.us-east-1.amazonaws.com.evil.example/x.pem",
        "https://evil.example/sns.us-east-1.amazonaws.com/x.pem",
        "https://user@sns.us-east-1.amazonaws.com/x.pem",
        "https://sns.us-east-1.amazonaws.com:8443/x.pem",
        "https://s3.us-east-1.amazonaws.com/x.pem", "https://sns.us-east-1.amazonaws.com",
        "https://SNS.us-east-1.amazonaws.com/x", ""})
    EXPECT_FALSE(IsSnsUrl(bad)) << bad;
}

TEST(Sns, ParsesTheSesNotificationInsideOneEventPerRecipient) {
  SnsMessage m{.type = "Notification", .message_id = "M"};
  m.message = json{{"notificationType", "Bounce"},
                   {"bounce",
                    {{"bounceType", "Permanent"},
                     {"bouncedRecipients",
                      {{{"emailAddress", "a@example.com"}}, {{"emailAddress", "b@example.com"}}}}}},
                   {"mail", {{"headers", {{{"name", "message-id"}, {"value", "<x@y>"}}}}}}}
                  .dump();
  auto events = ParseSes(m);
  ASSERT_TRUE(events.has_value()) << events.error().message;
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[1].event_id, "M/1");
  EXPECT_EQ((*events)[1].email, "b@example.com");
  EXPECT_EQ((*events)[0].kind, ProviderEventKind::kHardBounce);
  EXPECT_EQ((*events)[0].message_id, "<x@y>");
  m.message = json{{"eventType", "Bounce"},
                   {"bounce",
                    {{"bounceType", "Undetermined"},
                     {"bouncedRecipients", {{{"emailAddress", "a@example.com"}}}}}}}
                  .dump();
  EXPECT_EQ((*ParseSes(m))[0].kind, ProviderEventKind::kSoftBounce);
  m.message = json{{"notificationType", "Complaint"},
                   {"complaint", {{"complainedRecipients", {{{"emailAddress", "a@example.com"}}}}}}}
                  .dump();
  EXPECT_EQ((*ParseSes(m))[0].kind, ProviderEventKind::kComplaint);
  m.message = "not json";
  EXPECT_FALSE(ParseSes(m).has_value());
}

TEST(ProviderEvents, UnixSecondsAreDecimalDigitsOnly) {
  EXPECT_EQ(ParseUnixSeconds("1529006854").value_or(0), 1529006854);
  for (const char* bad : {"", "-1", "0", "12a", " 12", "1.5", "9999999999999"})
    EXPECT_FALSE(ParseUnixSeconds(bad).has_value()) << bad;
}

}  // namespace
}  // namespace crmd::mail

// The SES receiver's route (POST /mail/events/ses) against a real crmd: SNS posts its JSON
// as text/plain, and anything not signed by Amazon's certificate for the configured topic
// is refused with problem JSON before anything is fetched or recorded. The signature
// itself is tested with a test-made certificate in tests/contract/mail_receiver_ses_test.cc
// (a real server only ever fetches certificates from SNS hosts).
#include <gtest/gtest.h>

#include "tests/integration/rest/mail_receivers_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using nlohmann::json;

const std::string kSesPath = Url("/mail/events/ses");
const std::string kSesTopic = "arn:aws:sns:us-west-2:123456789012:MyTopic";

json SnsNotification(const std::string& topic, const std::string& cert_url) {
  return {{"Type", "Notification"},
          {"MessageId", "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324"},
          {"TopicArn", topic},
          {"Message", json{{"notificationType", "Bounce"},
                           {"bounce",
                            {{"bounceType", "Permanent"},
                             {"bouncedRecipients", {{{"emailAddress", "hard@example.com"}}}}}}}
                          .dump()},
          {"Timestamp", "2012-05-02T00:54:06.655Z"},
          {"SignatureVersion", "1"},
          {"Signature", "EXAMPLEw6JRN"},
          {"SigningCertURL", cert_url}};
}

http::ClientResponse PostSns(crmd::testing::TestServer& server, const json& body) {
  return server.Send(
      "POST", kSesPath, body.dump(),
      {{"Content-Type", "text/plain; charset=UTF-8"}, {"x-amz-sns-message-type", "Notification"}});
}

TEST(SesReceiverRoute, RefusesWhatIsNotSignedForTheConfiguredTopicAndRecordsNothing) {
  ReceiverFixture f;
  f.Subscriber("hard@example.com");
  // Not configured.
  auto r = PostSns(f.server, SnsNotification(kSesTopic, "https://sns.evil.example/c.pem"));
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_TRUE(IsProblem(r));

  EXPECT_EQ(f.Configure("ses", json::object()).status, 422);  // the topic is required
  EXPECT_EQ(f.Configure("ses", {{"topic_arn", "arn:aws:s3:::bucket"}}).status, 422);
  auto made = f.Configure("ses", {{"topic_arn", kSesTopic}});
  ASSERT_EQ(made.status, 200) << made.body;
  EXPECT_EQ(JsonBody(made)["topic_arn"], kSesTopic);

  for (const json& body : {SnsNotification(kSesTopic, "https://sns.evil.example/c.pem"),
                           SnsNotification(kSesTopic, "http://sns.us-west-2.amazonaws.com/c.pem"),
                           SnsNotification("arn:aws:sns:us-west-2:999999999999:Other",
                                           "https://sns.us-west-2.amazonaws.com/c.pem"),
                           json{{"Type", "Notification"}, {"TopicArn", kSesTopic}}}) {
    auto refused = PostSns(f.server, body);
    EXPECT_EQ(refused.status, 401) << refused.body;
    EXPECT_TRUE(IsProblem(refused)) << refused.body;
    EXPECT_EQ(JsonBody(refused).value("code", ""), "invalid_signature");
  }
  // Not JSON at all: 400, as on every JSON route.
  auto garbage = f.server.Send("POST", kSesPath, "not json", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(garbage.status, 400) << garbage.body;
  EXPECT_EQ(f.StatusOf("hard@example.com"), "subscribed");
  EXPECT_EQ(f.ProcessedEvents(), 0);
  EXPECT_EQ(f.Count("SELECT received_count FROM mail_receivers WHERE provider = 'ses'"), 0);
}

}  // namespace
}  // namespace crmd::resttest

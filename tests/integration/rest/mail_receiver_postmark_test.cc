// The Postmark receiver (POST /mail/events/postmark) against a real crmd: records shaped as
// Postmark documents its Bounce, SpamComplaint, Delivery and SubscriptionChange webhooks,
// authenticated by HTTP basic auth with the credentials configured here. Applied events,
// refusals with nothing recorded, replays (by ID, and by the derived id of a record
// without one), and admin answers that never hold the password.
#include <gtest/gtest.h>

#include "src/core/crypto.h"
#include "tests/integration/rest/mail_receivers_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using nlohmann::json;

const std::string kPostmarkUser = "postmark-hooks";
const std::string kPostmarkPassword = "b4f1c2e9d8a7f6e5d4c3b2a1-pm";
const std::string kPostmarkPath = Url("/mail/events/postmark");

http::Headers Basic(const std::string& user, const std::string& password) {
  return {{"Authorization", "Basic " + crypto::Base64Encode(user + ":" + password)}};
}

struct Postmark : ReceiverFixture {
  Postmark() {
    auto r = Configure("postmark", {{"username", kPostmarkUser}, {"password", kPostmarkPassword}});
    EXPECT_EQ(r.status, 200) << r.body;
  }
  http::ClientResponse Post(const json& record,
                            http::Headers auth = Basic(kPostmarkUser, kPostmarkPassword)) {
    return server.PostJson(kPostmarkPath, record, std::move(auth));
  }

  static json Bounce(int64_t id, const std::string& type, const std::string& email) {
    return {{"RecordType", "Bounce"},
            {"MessageStream", "outbound"},
            {"ID", id},
            {"Type", type},
            {"TypeCode", type == "HardBounce" ? 1 : 4096},
            {"Name", type == "HardBounce" ? "Hard bounce" : "Soft bounce"},
            {"Tag", "Test"},
            {"MessageID", "883953f4-6105-42a2-a16a-77a8eac79483"},
            {"Metadata", {{"a_key", "a_value"}}},
            {"ServerID", 23},
            {"Description", "The server was unable to deliver your message"},
            {"Details", "Test bounce details"},
            {"Email", email},
            {"From", "sender@example.com"},
            {"BouncedAt", "2019-11-05T16:33:54.9070259Z"},
            {"DumpAvailable", true},
            {"Inactive", type == "HardBounce"},
            {"CanActivate", true},
            {"Subject", "Test subject"}};
  }
  static json SpamComplaint(int64_t id, const std::string& email) {
    json j = Bounce(id, "SpamComplaint", email);
    j["RecordType"] = "SpamComplaint";
    j["TypeCode"] = 512;
    j["Name"] = "Spam complaint";
    return j;
  }
  static json Delivery(const std::string& recipient) {
    return {{"RecordType", "Delivery"},
            {"ServerID", 23},
            {"MessageStream", "outbound"},
            {"MessageID", "00000000-0000-0000-0000-000000000000"},
            {"Recipient", recipient},
            {"Tag", "welcome-email"},
            {"DeliveredAt", "2019-11-05T16:33:54.9070259Z"},
            {"Details", "Test delivery webhook details"},
            {"Metadata", {{"example", "value"}}}};
  }
  static json Unsubscribe(const std::string& recipient) {
    return {{"RecordType", "SubscriptionChange"},
            {"MessageID", "883953f4-6105-42a2-a16a-77a8eac79483"},
            {"ServerID", 23},
            {"MessageStream", "bulk"},
            {"ChangedAt", "2020-02-01T10:53:34.416071Z"},
            {"Recipient", recipient},
            {"Origin", "Recipient"},
            {"SuppressSending", true},
            {"SuppressionReason", "ManualSuppression"},
            {"Tag", "my-tag"},
            {"Metadata", {{"example", "value"}}}};
  }
};

TEST(PostmarkReceiver, AuthenticatedRecordsAreAppliedToContactsAndTheSuppressionList) {
  Postmark f;
  int64_t hard = f.Subscriber("hard@example.com");
  f.Subscriber("spam@example.com");
  f.Subscriber("leaver@example.com");
  int64_t soft = f.Subscriber("soft@example.com");

  auto r = f.Post(Postmark::Bounce(4323372036854775807, "HardBounce", "hard@example.com"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["event_id"], "4323372036854775807") << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["contact_id"], hard) << r.body;
  EXPECT_EQ(f.StatusOf("hard@example.com"), "bounced");
  EXPECT_EQ(f.SuppressedFor("hard@example.com"), "hard_bounce");

  r = f.Post(Postmark::SpamComplaint(42, "spam@example.com"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(f.StatusOf("spam@example.com"), "complained");
  EXPECT_EQ(f.SuppressedFor("spam@example.com"), "complaint");

  r = f.Post(Postmark::Unsubscribe("leaver@example.com"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["type"], "unsubscribe") << r.body;
  EXPECT_EQ(f.StatusOf("leaver@example.com"), "unsubscribed");

  r = f.Post(Postmark::Bounce(43, "SoftBounce", "soft@example.com"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["type"], "soft_bounce") << r.body;
  EXPECT_EQ(f.StatusOf("soft@example.com"), "subscribed");
  EXPECT_EQ(f.SuppressedFor("soft@example.com"), "");
  EXPECT_EQ(f.SoftBounces(soft), 1);

  r = f.Post(Postmark::Delivery("soft@example.com"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["type"], "delivered");
  EXPECT_EQ(JsonBody(r)["results"][0]["applied"], false);
  EXPECT_EQ(JsonBody(r)["results"][0]["event_id"].get<std::string>().rfind("sha256:", 0), 0u);
}

TEST(PostmarkReceiver, MissingOrWrongCredentialsAreRefusedAndNothingRecorded) {
  Postmark f;
  f.Subscriber("hard@example.com");
  int64_t suppressions = f.Suppressions();
  json record = Postmark::Bounce(7, "HardBounce", "hard@example.com");
  for (http::Headers auth :
       {http::Headers{}, Basic(kPostmarkUser, kPostmarkPassword + "x"),
        Basic(kPostmarkUser + "x", kPostmarkPassword), Basic("", ""),
        http::Headers{{"Authorization", "Bearer " + kPostmarkPassword}},
        http::Headers{{"Authorization", "Basic not*base64"}},
        http::Headers{{"Authorization",
                       "Basic " + crypto::Base64Encode(kPostmarkUser + kPostmarkPassword)}}}) {
    auto r = f.Post(record, auth);
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_TRUE(IsProblem(r)) << r.body;
    EXPECT_EQ(r.body.find(kPostmarkPassword), std::string::npos);
  }
  EXPECT_EQ(f.StatusOf("hard@example.com"), "subscribed");
  EXPECT_EQ(f.ProcessedEvents(), 0);
  EXPECT_EQ(f.Suppressions(), suppressions);
  EXPECT_EQ(f.Count("SELECT received_count FROM mail_receivers WHERE provider = 'postmark'"), 0);
}

TEST(PostmarkReceiver, AReplayedRecordIsAppliedOnce) {
  Postmark f;
  int64_t soft = f.Subscriber("soft@example.com");
  json bounce = Postmark::Bounce(99, "Transient", "soft@example.com");
  for (int i = 0; i < 3; ++i) {
    auto r = f.Post(bounce);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(JsonBody(r)["results"][0]["duplicate"], i > 0) << r.body;
  }
  EXPECT_EQ(f.SoftBounces(soft), 1);
  // A record without an ID: its derived id makes the repeat a duplicate too.
  auto first = f.Post(Postmark::Delivery("soft@example.com"));
  auto again = f.Post(Postmark::Delivery("soft@example.com"));
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(JsonBody(again)["results"][0]["duplicate"], true) << again.body;
  EXPECT_EQ(JsonBody(first)["results"][0]["event_id"], JsonBody(again)["results"][0]["event_id"]);
  EXPECT_EQ(f.ProcessedEvents(), 2);
}

TEST(PostmarkReceiver, ThePasswordIsStoredHashedAndNeverAnswered) {
  ReceiverFixture f;
  EXPECT_EQ(f.Configure("postmark", {{"username", kPostmarkUser}}).status, 422);  // no password
  EXPECT_EQ(f.Configure("postmark", {{"username", kPostmarkUser}, {"password", "short"}}).status,
            422);
  EXPECT_EQ(f.Configure("postmark", {{"username", "a:b"}, {"password", kPostmarkPassword}}).status,
            422);
  EXPECT_EQ(f.Configure("postmark", {{"signing_key", kPostmarkPassword}}).status, 422);
  auto made =
      f.Configure("postmark", {{"username", kPostmarkUser}, {"password", kPostmarkPassword}});
  ASSERT_EQ(made.status, 200) << made.body;
  EXPECT_EQ(JsonBody(made)["username"], kPostmarkUser);
  EXPECT_EQ(JsonBody(made)["has_password"], true);
  const std::string hash = crypto::HashSecret(kPostmarkPassword);
  EXPECT_EQ(f.Count("SELECT COUNT(*) FROM mail_receivers WHERE password_hash = '" + hash + "'"), 1);
  auto shown = f.server.Get(Url("/admin/mail-receivers/postmark"), Bearer(f.admin));
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(shown.body.find(kPostmarkPassword), std::string::npos);
  EXPECT_EQ(shown.body.find(hash), std::string::npos);

  // A new password replaces the old one at once.
  ASSERT_EQ(f.Configure("postmark", {{"password", kPostmarkPassword + "-new"}}).status, 200);
  EXPECT_EQ(f.server
                .PostJson(kPostmarkPath, Postmark::Delivery("a@example.com"),
                          Basic(kPostmarkUser, kPostmarkPassword))
                .status,
            401);
  EXPECT_EQ(f.server
                .PostJson(kPostmarkPath, Postmark::Delivery("a@example.com"),
                          Basic(kPostmarkUser, kPostmarkPassword + "-new"))
                .status,
            200);
}

}  // namespace
}  // namespace crmd::resttest

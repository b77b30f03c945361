// Delivery proof (a): the 8 product events, produced by the real contact, list and tag
// operations (not by writing the outbox directly), reach a loopback receiver, and the
// receiver verifies every signature on its own: it recomputes the Standard Webhooks HMAC
// from the raw body with the core crypto primitives, without src/webhooks/signing.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/core/crypto.h"
#include "src/crm/events.h"
#include "tests/integration/webhooks/receiver.h"
#include "tests/support/test_server.h"

namespace crmd::webhooktest {
namespace {

using crmd::testing::TestServer;

// Standard Webhooks 1.0.0, "Verifying webhooks": signed content "<id>.<timestamp>.<body>",
// HMAC-SHA256 keyed with the base64-decoded secret after "whsec_", compared against each
// space-separated "v1,<base64>" entry; the timestamp must be recent (5 minutes here).
::testing::AssertionResult VerifiedByReceiver(const std::string& secret, const http::Request& req) {
  auto id = req.Header("webhook-id");
  auto ts = req.Header("webhook-timestamp");
  auto sig = req.Header("webhook-signature");
  if (!id || !ts || !sig) return ::testing::AssertionFailure() << "missing a webhook-* header";
  if (secret.rfind("whsec_", 0) != 0) return ::testing::AssertionFailure() << "secret shape";
  auto key = crypto::Base64Decode(secret.substr(6));
  if (!key) return ::testing::AssertionFailure() << "secret is not base64";
  const int64_t timestamp = std::stoll(std::string(*ts));
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  if (std::llabs(now - timestamp) > 300)
    return ::testing::AssertionFailure() << "stale timestamp " << timestamp;
  const std::string content = std::string(*id) + "." + std::string(*ts) + "." + req.body;
  const std::string expected = crypto::Base64Encode(crypto::HmacSha256(*key, content));
  std::string_view list = *sig;
  while (!list.empty()) {
    auto space = list.find(' ');
    std::string_view entry = list.substr(0, space);
    if (entry.substr(0, 3) == "v1," && crypto::ConstantTimeEqual(entry.substr(3), expected))
      return ::testing::AssertionSuccess();
    if (space == std::string_view::npos) break;
    list.remove_prefix(space + 1);
  }
  return ::testing::AssertionFailure() << "no v1 signature matches for " << *id;
}

TEST(WebhookDeliveryProof, AllEightContactEventsFromTheContactServiceArriveVerifiably) {
  Receiver receiver;
  TestServer server({.configure = [](Config& c) {
    c.webhook_poll_interval_ms = 100;
    c.webhook_timeout_ms = 3000;
  }});
  auto& s = server.app().services();
  std::vector<std::string> all;
  for (const auto& e : crm::events::kAll) all.emplace_back(e.name);
  auto ep = s.webhook_endpoints->Create({.url = receiver.url(), .events = all});
  ASSERT_TRUE(ep.has_value()) << ep.error().message;
  const std::string secret = ep->second;

  // The operations of the product, each through its service.
  const governance::Actor actor{.kind = "system", .subject = "delivery-proof"};
  auto& contacts = *s.crm->contacts;
  auto list = s.crm->lists->Create(actor, "Newsletter", "");
  ASSERT_TRUE(list.has_value());
  auto c = contacts.Create(actor, {.email = "proof@example.com", .status = "subscribed"});
  ASSERT_TRUE(c.has_value()) << c.error().message;  // New Contact
  auto u = contacts.Update(actor, c->id, c->revision, {.first_name = "Grace"});
  ASSERT_TRUE(u.has_value()) << u.error().message;  // Update Contact
  ASSERT_TRUE(contacts.AddTags(actor, {c->id}, {std::string("vip")}).has_value());     // Add Tag
  ASSERT_TRUE(contacts.RemoveTags(actor, {c->id}, {std::string("vip")}).has_value());  // Remove Tag
  ASSERT_TRUE(contacts.AddToLists(actor, {c->id}, {list->id}).has_value());            // Add List
  ASSERT_TRUE(contacts.RemoveFromLists(actor, {c->id}, {list->id}).has_value());  // Remove List
  auto st = contacts.SetStatus(actor, c->id, "unsubscribed", false, std::nullopt);
  ASSERT_TRUE(st.has_value()) << st.error().message;  // Update Contact Status
  ASSERT_TRUE(contacts.DeleteByEmail(actor, "proof@example.com").has_value());  // Delete Contact

  // Every outbox event of this contact, in order.
  auto rows = s.db->Read([&](store::Conn& conn) {
    return conn.Query("SELECT id, event_type FROM outbox_events WHERE contact_id = ? ORDER BY id",
                      {c->id});
  });
  ASSERT_TRUE(rows.has_value());
  std::vector<std::string> produced_ids, produced_types;
  for (const auto& r : *rows) {
    produced_ids.push_back("evt_" + std::to_string(r.Int(0)));
    produced_types.push_back(r.Str(1));
  }
  std::set<std::string> distinct(produced_types.begin(), produced_types.end());
  ASSERT_EQ(distinct, std::set<std::string>(all.begin(), all.end()))
      << "the operations above did not produce all 8 event types";

  ASSERT_TRUE(receiver.WaitFor([&](const auto& reqs) {
    return reqs.size() >= produced_ids.size();
  })) << "received "
      << receiver.requests().size() << " of " << produced_ids.size();
  std::vector<std::string> got_ids, got_types;
  for (const auto& req : receiver.requests()) {
    EXPECT_TRUE(VerifiedByReceiver(secret, req));
    // Tampering with one byte breaks it.
    http::Request tampered = req;
    tampered.body += " ";
    EXPECT_FALSE(VerifiedByReceiver(secret, tampered));
    auto body = nlohmann::json::parse(req.body);
    EXPECT_EQ(body["id"], std::string(*req.Header("webhook-id")));
    EXPECT_EQ(req.Header("Content-Type").value_or(""), "application/json");
    got_ids.push_back(body["id"]);
    got_types.push_back(body["type"]);
  }
  // One contact: one endpoint gets its events exactly in the order they happened.
  EXPECT_EQ(got_ids, produced_ids);
  EXPECT_EQ(got_types, produced_types);
  auto succeeded = [&] {
    auto log = s.webhook_deliveries->List({.status = "succeeded", .limit = 100});
    return log ? log->size() : 0u;
  };
  EXPECT_TRUE(WaitUntil([&] { return succeeded() >= produced_ids.size(); }, 30));
  EXPECT_EQ(succeeded(), produced_ids.size());
}

}  // namespace
}  // namespace crmd::webhooktest

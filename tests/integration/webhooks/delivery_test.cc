#include <gtest/gtest.h>

#include <set>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/crm/events.h"
#include "src/webhooks/signing.h"
#include "tests/integration/webhooks/receiver.h"
#include "tests/support/test_server.h"

namespace crmd::webhooktest {
namespace {

using crmd::testing::TestServer;

void FastWebhooks(Config& c) {
  c.webhook_poll_interval_ms = 100;
  c.webhook_backoff_base_s = 1;
  c.webhook_backoff_max_s = 2;
  c.webhook_timeout_ms = 3000;
  c.webhook_disable_after_failures = 1000;
}

// Appends to the outbox the way the contact service does (same table, same shape).
void AppendEvent(TestServer& server, std::string_view type, int64_t contact_id) {
  auto r = server.app().services().db->Write([&](store::Conn& c) {
    return c.Exec(
        "INSERT INTO outbox_events (event_type, contact_id, data, occurred_at) VALUES (?, ?, ?, ?)",
        {std::string(type), contact_id, nlohmann::json{{"contact", {{"id", contact_id}}}}.dump(),
         int64_t{1760000000}});
  });
  ASSERT_TRUE(r.has_value());
}

std::vector<std::string> AllEvents() {
  std::vector<std::string> out;
  for (const auto& e : crm::events::kAll) out.emplace_back(e.name);
  return out;
}

TEST(WebhookDelivery, AllEightEventsArriveSignedPerStandardWebhooks) {
  Receiver receiver;
  TestServer server({.configure = FastWebhooks});
  auto ep = server.app().services().webhook_endpoints->Create(
      {.url = receiver.url(), .events = AllEvents()});
  ASSERT_TRUE(ep.has_value()) << ep.error().message;
  const std::string secret = ep->second;
  for (const auto& e : crm::events::kAll) AppendEvent(server, e.name, 42);
  ASSERT_TRUE(receiver.WaitFor([](const auto& reqs) { return reqs.size() >= 8; }));
  auto reqs = receiver.requests();
  std::vector<std::string> types;
  for (const auto& r : reqs) {
    auto id = std::string(r.Header("webhook-id").value_or(""));
    auto ts = std::stoll(std::string(r.Header("webhook-timestamp").value_or("0")));
    auto sig = std::string(r.Header("webhook-signature").value_or(""));
    EXPECT_TRUE(webhooks::VerifySignature(secret, id, ts, r.body, sig)) << id;
    EXPECT_FALSE(webhooks::VerifySignature(secret, id, ts, r.body + "x", sig));
    auto body = nlohmann::json::parse(r.body);
    EXPECT_EQ(body["id"], id);
    EXPECT_TRUE(body.contains("occurred_at"));
    EXPECT_EQ(body["data"]["contact"]["id"], 42);
    types.push_back(body["type"]);
  }
  // One contact: delivered in event order.
  EXPECT_EQ(types, AllEvents());
  auto succeeded = [&] {
    auto log = server.app().services().webhook_deliveries->List({.status = "succeeded"});
    return log ? log->size() : 0u;
  };
  EXPECT_TRUE(WaitUntil([&] { return succeeded() >= 8u; }, 30));
  EXPECT_EQ(succeeded(), 8u);
}

TEST(WebhookDelivery, ReceiverDownThenUpGetsEveryEvent) {
  Receiver receiver;
  receiver.set_status(503);
  TestServer server({.configure = FastWebhooks});
  auto ep = server.app().services().webhook_endpoints->Create(
      {.url = receiver.url(),
       .events = std::vector<std::string>{"contact.created", "contact.updated"}});
  ASSERT_TRUE(ep.has_value());
  for (int c = 1; c <= 5; ++c) {
    AppendEvent(server, "contact.created", c);
    AppendEvent(server, "contact.updated", c);
  }
  ASSERT_TRUE(receiver.WaitFor([](const auto& reqs) { return reqs.size() >= 5; }));
  receiver.set_status(200);
  auto succeeded = [&] {
    auto log = server.app().services().webhook_deliveries->List({.status = "succeeded"});
    return log ? log->size() : 0u;
  };
  EXPECT_TRUE(WaitUntil([&] { return succeeded() >= 10u; }, 40));
  EXPECT_EQ(succeeded(), 10u);
  std::set<std::string> ids;
  for (const auto& r : receiver.requests())
    if (r.Header("webhook-id")) ids.insert(std::string(*r.Header("webhook-id")));
  EXPECT_EQ(ids.size(), 10u);
}

}  // namespace
}  // namespace crmd::webhooktest

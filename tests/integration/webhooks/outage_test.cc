// Issue 13: outgoing-webhook endpoints survive receiver outages. A burst of contact changes
// meets a receiver that refuses connections; when it is back, every event arrives exactly
// once, in per-contact order, and the endpoint was never disabled. The time rule still
// disables an endpoint that has had no success for webhook_disable_after_s (shortened here,
// the rule itself unchanged), and enabling it again delivers the backlog it kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/crm/contacts.h"
#include "src/governance/audit.h"
#include "tests/integration/webhooks/receiver.h"
#include "tests/support/test_server.h"

namespace crmd::webhooktest {
namespace {

using crmd::testing::TestServer;

int64_t CountDeliveries(TestServer& server, const std::string& status) {
  auto n = server.app().services().db->Read([&](store::Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne("SELECT COUNT(*) FROM webhook_deliveries WHERE status = ?", {status});
    if (!row) return Fail(row.error());
    return *row ? (*row)->Int(0) : 0;
  });
  return n ? *n : -1;
}

// Deliveries an attempt is in flight for (leased, outcome not yet recorded).
int64_t CountInFlight(TestServer& server) {
  auto n = server.app().services().db->Read([&](store::Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne("SELECT COUNT(*) FROM webhook_deliveries WHERE lease_until IS NOT NULL");
    if (!row) return Fail(row.error());
    return *row ? (*row)->Int(0) : 0;
  });
  return n ? *n : -1;
}

std::optional<webhooks::Endpoint> GetEndpoint(TestServer& server, int64_t id) {
  auto e = server.app().services().webhook_endpoints->Get(id);
  if (!e) return std::nullopt;
  return *e;
}

// The successful (2xx) requests by webhook-id, in arrival order.
std::vector<std::pair<std::string, nlohmann::json>> Received(Receiver& receiver) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  for (const auto& r : receiver.requests())
    out.emplace_back(std::string(r.Header("webhook-id").value_or("")),
                     nlohmann::json::parse(r.body, nullptr, false));
  return out;
}

// A port nobody listens on (any more): connections to it are refused.
uint16_t RefusingPort() {
  Receiver probe;
  return probe.port();
}

TEST(WebhookOutage, ABurstOf1000EventsDuringAnOutageIsDeliveredOnceEachAndTheEndpointStaysEnabled) {
  const uint16_t port = RefusingPort();
  ASSERT_NE(port, 0);
  TestServer server({.configure = [](Config& c) {
    // Shorter retries so the test takes seconds; the disable rule keeps its defaults
    // (5 days without success and at least 20 failures).
    c.webhook_poll_interval_ms = 100;
    c.webhook_backoff_base_s = 1;
    c.webhook_backoff_max_s = 2;
    c.webhook_timeout_ms = 3000;
  }});
  auto& s = server.app().services();
  ASSERT_EQ(s.config.webhook_disable_after_s, 5 * 24 * 3600);
  ASSERT_EQ(s.config.webhook_disable_after_failures, 20);
  auto ep = s.webhook_endpoints->Create(
      {.url = "http://127.0.0.1:" + std::to_string(port) + "/hook",
       .events = std::vector<std::string>{"contact.created", "contact.updated"}});
  ASSERT_TRUE(ep.has_value()) << ep.error().message;
  const int64_t endpoint_id = ep->first.id;

  // 1,000 contact changes through the contact service: 500 contacts created, each updated.
  const governance::Actor actor{.kind = "system", .subject = "outage-test"};
  auto& contacts = *s.crm->contacts;
  for (int i = 0; i < 500; ++i) {
    auto c = contacts.Create(
        actor, {.email = "burst" + std::to_string(i) + "@example.com", .status = "subscribed"});
    ASSERT_TRUE(c.has_value()) << c.error().message;
    auto u = contacts.Update(actor, c->id, c->revision, {.first_name = "N" + std::to_string(i)});
    ASSERT_TRUE(u.has_value()) << u.error().message;
  }

  // The receiver is down while the burst queues: far more failures than the old rule's 50.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto e = GetEndpoint(server, endpoint_id);
        return CountDeliveries(server, "pending") == 1000 && e && e->consecutive_failures >= 200;
      },
      120))
      << "pending " << CountDeliveries(server, "pending");
  auto during = GetEndpoint(server, endpoint_id);
  ASSERT_TRUE(during.has_value());
  EXPECT_TRUE(during->enabled) << during->disabled_reason.value_or("");
  EXPECT_TRUE(during->failing_since.has_value());

  // The receiver comes back on the same address.
  Receiver receiver(port);
  ASSERT_EQ(receiver.port(), port);
  ASSERT_TRUE(WaitUntil([&] { return CountDeliveries(server, "succeeded") == 1000; }, 180))
      << "succeeded " << CountDeliveries(server, "succeeded");

  auto received = Received(receiver);
  std::map<std::string, int> times;
  for (const auto& [id, body] : received) ++times[id];
  EXPECT_EQ(times.size(), 1000u);
  for (const auto& [id, n] : times) EXPECT_EQ(n, 1) << id << " arrived " << n << " times";
  // Per contact: created before updated (crmd's order promise is per contact and endpoint).
  std::map<int64_t, std::vector<std::string>> per_contact;
  for (const auto& [id, body] : received) {
    ASSERT_TRUE(body.is_object()) << id;
    per_contact[body["data"]["id"].get<int64_t>()].push_back(body["type"]);
  }
  EXPECT_EQ(per_contact.size(), 500u);
  for (const auto& [contact, types] : per_contact)
    EXPECT_EQ(types, (std::vector<std::string>{"contact.created", "contact.updated"})) << contact;

  auto after = GetEndpoint(server, endpoint_id);
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(after->enabled);
  EXPECT_EQ(after->consecutive_failures, 0);
  EXPECT_FALSE(after->failing_since.has_value());
  EXPECT_EQ(CountDeliveries(server, "failed"), 0);
  EXPECT_EQ(CountDeliveries(server, "pending"), 0);
}

TEST(WebhookOutage, NoSuccessForTheWindowDisablesAndEnablingDeliversTheKeptBacklog) {
  Receiver receiver;
  receiver.set_status(503);
  TestServer server({.configure = [](Config& c) {
    c.webhook_poll_interval_ms = 100;
    c.webhook_backoff_base_s = 1;
    c.webhook_backoff_max_s = 1;
    c.webhook_timeout_ms = 3000;
    c.webhook_disable_after_s = 3;  // the window, shortened; at least 20 failures as ever
  }});
  auto& s = server.app().services();
  auto ep = s.webhook_endpoints->Create(
      {.url = receiver.url(), .events = std::vector<std::string>{"contact.created"}});
  ASSERT_TRUE(ep.has_value()) << ep.error().message;
  const int64_t endpoint_id = ep->first.id;
  const governance::Actor actor{.kind = "system", .subject = "outage-test"};
  auto create = [&](int i) {
    auto c = s.crm->contacts->Create(
        actor, {.email = "kept" + std::to_string(i) + "@example.com", .status = "subscribed"});
    ASSERT_TRUE(c.has_value()) << c.error().message;
  };
  for (int i = 0; i < 30; ++i) create(i);

  ASSERT_TRUE(WaitUntil(
      [&] {
        auto e = GetEndpoint(server, endpoint_id);
        return e && !e->enabled;
      },
      60));
  auto disabled = GetEndpoint(server, endpoint_id);
  ASSERT_TRUE(disabled.has_value());
  ASSERT_TRUE(disabled->disabled_reason.has_value());
  EXPECT_NE(disabled->disabled_reason->find("no successful delivery since"), std::string::npos)
      << *disabled->disabled_reason;
  EXPECT_GE(disabled->consecutive_failures, 20);
  ASSERT_TRUE(disabled->failing_since && disabled->disabled_at);
  EXPECT_GE(*disabled->disabled_at - *disabled->failing_since, 3);
  auto audit = s.governance->audit->Recent(20);
  ASSERT_TRUE(audit.has_value());
  auto disable_entry =
      std::find_if(audit->begin(), audit->end(), [](const governance::AuditRecord& r) {
        return r.entry.action == "disable_webhook_endpoint";
      });
  ASSERT_NE(disable_entry, audit->end());
  EXPECT_EQ(disable_entry->entry.target_ids, std::vector<int64_t>{endpoint_id});
  EXPECT_EQ(disable_entry->entry.details["reason"], *disabled->disabled_reason);
  EXPECT_EQ(disable_entry->occurred_at, *disabled->disabled_at);

  // Kept, not dropped: nothing failed for good, and changes while disabled still queue.
  for (int i = 30; i < 35; ++i) create(i);
  ASSERT_TRUE(WaitUntil(
      [&] { return CountDeliveries(server, "pending") == 35 && CountInFlight(server) == 0; }, 30));
  EXPECT_EQ(CountDeliveries(server, "failed"), 0);
  EXPECT_EQ(CountDeliveries(server, "succeeded"), 0);

  receiver.set_status(200);
  const size_t before = receiver.requests().size();
  auto enabled = s.webhook_endpoints->Update(endpoint_id, {.enabled = true},
                                             governance::Actor{.kind = "cli", .subject = "crmctl"});
  ASSERT_TRUE(enabled.has_value()) << enabled.error().message;
  EXPECT_TRUE(enabled->enabled);
  ASSERT_TRUE(WaitUntil([&] { return CountDeliveries(server, "succeeded") == 35; }, 60))
      << "succeeded " << CountDeliveries(server, "succeeded");
  auto reqs = receiver.requests();
  std::map<std::string, int> times;
  for (size_t i = before; i < reqs.size(); ++i)
    ++times[std::string(reqs[i].Header("webhook-id").value_or(""))];
  EXPECT_EQ(times.size(), 35u);
  for (const auto& [id, n] : times) EXPECT_EQ(n, 1) << id;
  auto after_audit = s.governance->audit->Recent(5);
  ASSERT_TRUE(after_audit.has_value());
  auto enable_entry = std::find_if(
      after_audit->begin(), after_audit->end(),
      [](const governance::AuditRecord& r) { return r.entry.action == "enable_webhook_endpoint"; });
  ASSERT_NE(enable_entry, after_audit->end());
  EXPECT_EQ(enable_entry->actor.kind, "cli");
  EXPECT_EQ(enable_entry->entry.details["resumed_deliveries"], 35);
  EXPECT_EQ(enable_entry->entry.details["previous_reason"], *disabled->disabled_reason);
  EXPECT_TRUE(GetEndpoint(server, endpoint_id)->enabled);
}

}  // namespace
}  // namespace crmd::webhooktest

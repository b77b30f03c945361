// Delivery proof (c): the real crmd binary is killed with SIGKILL while deliveries are in
// flight, restarted on the same SQLite file, and every event id still reaches the receiver
// (at least once). Endpoint and incoming hook are configured with the real crmctl; events
// are produced over HTTP through the incoming webhook (contact service: contact.created and
// contact.tag_added per payload).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "src/core/http_client.h"
#include "src/http/client.h"
#include "src/store/db.h"
#include "tests/integration/webhooks/receiver.h"
#include "tests/support/crmd_process.h"
#include "tests/support/test_server.h"

extern char** environ;

namespace crmd::webhooktest {
namespace {

using crmd::testing::CrmdProcess;
using crmd::testing::FreePort;

const std::string kCrmctl = std::string(CRMD_BINARY_DIR) + "/src/app/crmctl";

// stdout of a crmctl run (stderr goes to the test log); the exit status in *status.
std::string Crmctl(const std::vector<std::string>& args, int* status) {
  std::string cmd = kCrmctl;
  for (const auto& a : args) {
    std::string quoted = "'";
    for (char ch : a) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    cmd += " " + quoted + "'";
  }
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  *status = pclose(p);
  return out;
}

bool WaitHealthy(http::HttpClient& client, const std::string& base, int seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    auto r = client.Send(
        {.method = "GET", .url = base + "/healthz", .timeout_ms = 1000, .allow_private = true});
    if (r && r->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::set<std::string> OutboxIds(const std::string& db_url) {
  std::set<std::string> ids;
  auto db = store::Open(db_url, 1);
  if (!db) return ids;
  auto rows = (*db)->Read([](store::Conn& c) { return c.Query("SELECT id FROM outbox_events"); });
  if (rows)
    for (const auto& r : *rows) ids.insert("evt_" + std::to_string(r.Int(0)));
  return ids;
}

std::set<std::string> ReceivedIds(Receiver& receiver) {
  std::set<std::string> ids;
  for (const auto& r : receiver.requests())
    if (auto id = r.Header("webhook-id")) ids.insert(std::string(*id));
  return ids;
}

TEST(WebhookDeliveryProof, KilledMidDeliveryAndRestartedLosesNoEvent) {
  crmd::testing::TempDir dir;
  Receiver receiver;
  receiver.set_delay_ms(150);  // slow receiver: a delivery is almost always in flight
  const uint16_t port = FreePort();
  ASSERT_NE(port, 0);
  const std::string db_url = "sqlite:" + dir.path() + "/crmd.db";
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  const std::vector<std::string> config = {
      "--database_url=" + db_url,       "--listen_address=127.0.0.1",
      "--port=" + std::to_string(port), "--allow_private_network_targets=true",
      "--webhook_poll_interval_ms=100", "--webhook_backoff_base_s=1",
      "--webhook_backoff_max_s=2",      "--webhook_timeout_ms=2000",
      "--webhook_lease_grace_s=2",      "--log_level=warn",
  };

  // Configure with crmctl, before crmd runs.
  int status = 0;
  auto args = config;
  args.insert(args.end(), {"webhook", "create", receiver.url(), "all"});
  auto ep_out = Crmctl(args, &status);
  ASSERT_EQ(status, 0) << ep_out;
  auto ep = nlohmann::json::parse(ep_out, nullptr, false);
  ASSERT_FALSE(ep.is_discarded()) << ep_out;
  EXPECT_EQ(ep["secret"].get<std::string>().rfind("whsec_", 0), 0u);
  args = config;
  args.insert(args.end(), {"hook", "create", "crash", R"({"email": "contact.email"})",
                           R"({"tags": ["crash-test"]})"});
  auto hook_out = Crmctl(args, &status);
  ASSERT_EQ(status, 0) << hook_out;
  auto hook = nlohmann::json::parse(hook_out, nullptr, false);
  ASSERT_FALSE(hook.is_discarded()) << hook_out;
  const std::string hook_url = hook["url"];
  ASSERT_EQ(hook_url.rfind(base + "/api/crm/v1/hooks/crmd_hook_", 0), 0u) << hook_url;

  auto client = http::MakeHttpClient();
  const std::string log = dir.path() + "/crmd.log";
  auto first = std::make_unique<CrmdProcess>(config, log);
  ASSERT_TRUE(first->pid() > 0);
  ASSERT_TRUE(WaitHealthy(*client, base, 20)) << "crmd did not start; see " << log;

  // 20 payloads -> 40 events (contact.created + contact.tag_added each).
  constexpr int kContacts = 20;
  for (int i = 0; i < kContacts; ++i) {
    auto r = client->Send(
        {.method = "POST",
         .url = hook_url,
         .headers = {{"Content-Type", "application/json"}},
         .body =
             nlohmann::json{{"contact", {{"email", "crash" + std::to_string(i) + "@example.com"}}}}
                 .dump(),
         .timeout_ms = 5000,
         .allow_private = true});
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
  }
  const std::set<std::string> produced = OutboxIds(db_url);
  ASSERT_EQ(produced.size(), 2u * kContacts);

  // Kill while the receiver is answering slowly: some delivered, one in flight, most not.
  ASSERT_TRUE(receiver.WaitFor([](const auto& reqs) { return reqs.size() >= 5; }, 30));
  first->Kill();
  const size_t at_kill = ReceivedIds(receiver).size();
  EXPECT_LT(at_kill, produced.size()) << "everything was delivered before the kill";
  ::testing::Test::RecordProperty("delivered_before_kill", static_cast<int>(at_kill));

  // Restart on the same database; the receiver speeds up.
  receiver.set_delay_ms(10);
  CrmdProcess second(config, log);
  ASSERT_TRUE(second.pid() > 0);
  ASSERT_TRUE(WaitHealthy(*client, base, 20)) << "crmd did not restart; see " << log;
  // The attempt that was in flight is retried once its lease (timeout + 30 s) runs out.
  bool all = receiver.WaitFor(
      [&](const auto&) {
        auto got = ReceivedIds(receiver);
        for (const auto& id : produced)
          if (!got.count(id)) return false;
        return true;
      },
      90);
  auto got = ReceivedIds(receiver);
  std::vector<std::string> missing;
  for (const auto& id : produced)
    if (!got.count(id)) missing.push_back(id);
  EXPECT_TRUE(all) << missing.size() << " event(s) never arrived, e.g. "
                   << (missing.empty() ? "" : missing.front()) << " (" << at_kill
                   << " had arrived before the kill)";
  EXPECT_EQ(got.size(), produced.size());  // nothing that was not produced
}

}  // namespace
}  // namespace crmd::webhooktest

// GET /readyz: the database, the schema's migration level against this binary's, and the
// lag of the job queues; 503 when the schema is behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include "src/app/app.h"
#include "src/app/services.h"
#include "tests/support/test_server.h"

namespace crmd::opstest {
namespace {

using nlohmann::json;
using testing::JsonBody;
using testing::TestServer;

TEST(Readyz, ReportsDatabaseMigrationLevelAndJobQueues) {
  TestServer server;
  auto r = server.Get("/readyz");
  ASSERT_EQ(r.status, 200) << r.body;
  json body = JsonBody(r);
  EXPECT_EQ(body["status"], "ready");
  EXPECT_EQ(body["database"]["ok"], true);
  EXPECT_GE(body["migrations"]["expected"].get<int>(), 50);  // 0050_trace_context
  EXPECT_EQ(body["migrations"]["applied"], body["migrations"]["expected"]);
  EXPECT_EQ(body["migrations"]["pending"], 0);
  for (const char* queue : {"webhook_deliveries", "campaign_sends", "automation_steps"}) {
    EXPECT_EQ(body["jobs"][queue]["pending"], 0) << queue;
    EXPECT_EQ(body["jobs"][queue]["due"], 0) << queue;
    EXPECT_EQ(body["jobs"][queue]["lag_seconds"], 0) << queue;
  }
  // /healthz stays trivial.
  EXPECT_EQ(JsonBody(server.Get("/healthz")), json({{"status", "ok"}}));
}

TEST(Readyz, LagIsTheAgeOfTheOldestDueDelivery) {
  TestServer server;
  auto& s = server.app().services();
  // No delivery worker: the rows below stay where the test put them.
  s.webhook_worker->Stop();
  auto ep = s.webhook_endpoints->Create(
      {.url = "http://127.0.0.1:9/hook", .events = std::vector<std::string>{"contact.created"}});
  ASSERT_TRUE(ep.has_value()) << ep.error().message;
  const int64_t now = s.clock->NowUnix();
  auto inserted = s.db->Write([&](store::Conn& c) -> Result<bool> {
    // Due 600 s ago and 60 s ago, and one not due for an hour.
    for (auto [event, due] :
         {std::pair<int64_t, int64_t>{1, now - 600}, {2, now - 60}, {3, now + 3600}}) {
      auto r = c.Exec(
          "INSERT INTO webhook_deliveries (event_id, endpoint_id, event_type, contact_id, payload, "
          "status, attempts, next_attempt_at, retry_until, created_at, updated_at) "
          "VALUES (?, ?, 'contact.created', ?, '{}', 'pending', 0, ?, ?, ?, ?)",
          {event, ep->first.id, event, due, now + 86400, now, now});
      if (!r) return Fail(r.error());
    }
    return true;
  });
  ASSERT_TRUE(inserted.has_value()) << inserted.error().message;
  json body = JsonBody(server.Get("/readyz"));
  const json& q = body["jobs"]["webhook_deliveries"];
  EXPECT_EQ(q["pending"], 3);
  EXPECT_EQ(q["due"], 2);
  // The oldest due row fell due 600 s before `now` (read a moment ago).
  EXPECT_GE(q["lag_seconds"].get<int64_t>(), 600);
  EXPECT_LT(q["lag_seconds"].get<int64_t>(), 600 + 300);
  EXPECT_EQ(body["status"], "ready") << "lag alone does not make the node unready";
}

// Once the database cannot make writes durable (here: its WAL file removed, which fails
// the next sync), the node is unavailable, though it still reads: at once, and after a
// write has failed.
TEST(Readyz, ADatabaseThatCannotMakeWritesDurableIsUnavailable) {
  TestServer server(testing::TestServerOptions{.sqlite = true});
  auto before = server.Get("/readyz");
  ASSERT_EQ(before.status, 200) << before.body;
  EXPECT_EQ(JsonBody(before)["database"]["writable"], true);
  auto& s = server.app().services();
  ASSERT_EQ(unlink((server.db_path() + "-wal").c_str()), 0);
  // Seen at once, before any write.
  EXPECT_EQ(server.Get("/readyz").status, 503);
  auto write = s.db->Write([](store::Conn& c) {
    return c.Exec("UPDATE schema_migrations SET version = version WHERE 0");
  });
  ASSERT_FALSE(write.has_value());
  EXPECT_EQ(write.error().code, Errc::kUnavailable);
  auto r = server.Get("/readyz");
  EXPECT_EQ(r.status, 503);
  json body = JsonBody(r);
  EXPECT_EQ(body["status"], "unavailable");
  EXPECT_EQ(body["database"]["ok"], false);
  EXPECT_EQ(body["database"]["writable"], false);
  EXPECT_EQ(body["migrations"]["pending"], 0);  // read as before
}

TEST(Readyz, SchemaBehindTheBinaryIsUnavailable) {
  TestServer server;
  auto& s = server.app().services();
  auto removed = s.db->Write([](store::Conn& c) {
    return c.Exec(
        "DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM "
        "schema_migrations)");
  });
  ASSERT_TRUE(removed.has_value());
  ASSERT_EQ(*removed, 1);
  auto r = server.Get("/readyz");
  EXPECT_EQ(r.status, 503);
  json body = JsonBody(r);
  EXPECT_EQ(body["status"], "unavailable");
  EXPECT_EQ(body["migrations"]["pending"], 1);
  // Versions need not be consecutive (each branch takes its own range of numbers).
  auto highest = s.db->Read([](store::Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne("SELECT MAX(version) FROM schema_migrations");
    if (!row) return Fail(row.error());
    return (*row)->Int(0);
  });
  ASSERT_TRUE(highest.has_value());
  EXPECT_EQ(body["migrations"]["applied"].get<int64_t>(), *highest);
  EXPECT_LT(body["migrations"]["applied"].get<int>(), body["migrations"]["expected"].get<int>());
  EXPECT_EQ(server.Get("/healthz").status, 200);
}

}  // namespace
}  // namespace crmd::opstest

// crmctl backup / restore: a backup taken with the real crmctl while a real crmd serves a
// stream of writes holds every write acknowledged before the backup began, passes the
// integrity check, and restores into a database a new crmd serves.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "src/store/db.h"
#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/support/mcp_client.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd {
namespace {

using nlohmann::json;

using testing::Crmctl;
using testing::CtlRun;

TEST(Backup, OnlineBackupUnderWriteLoadHoldsEveryAcknowledgedWriteAndRestores) {
  // Backups are SQLite's; the site is SQLite also in the pg. run.
  testing::TestServer server(testing::TestServerOptions{.sqlite = true});
  std::string token = testing::MintTestToken(server);
  std::mutex mu;
  std::set<int64_t> acknowledged;
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w) {
    writers.emplace_back([&, w] {
      testing::McpClient c(server, testing::McpClientOptions{.token = token});
      if (!c.Initialize().ok()) return;
      for (int i = 0; !stop; ++i) {
        auto r = c.CallTool("create_contact", {{"email", "w" + std::to_string(w) + "-" +
                                                             std::to_string(i) + "@example.com"}});
        if (r.ok() && !r.is_tool_error()) {
          std::lock_guard lock(mu);
          acknowledged.insert(r.structured()["contact"].value("id", int64_t{0}));
        }
      }
    });
  }
  // The backup starts once the load is well under way (more than 10 acknowledged writes;
  // a sanitized build on a busy machine took longer than the 700 ms once waited here).
  std::set<int64_t> before_backup;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    {
      std::lock_guard lock(mu);
      before_backup = acknowledged;
    }
    if (before_backup.size() > 10u) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string backup = server.dir() + "/backup.db";
  CtlRun b = Crmctl("--database_url=sqlite:" + server.db_path() + " backup " + backup);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // writes go on after it
  stop = true;
  for (auto& t : writers) t.join();
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_NE(b.out.find("integrity ok"), std::string::npos) << b.out;
  ASSERT_GT(before_backup.size(), 10u) << "the load did not run";

  // Restore into a fresh site, and serve it.
  const std::string restored = server.dir() + "/restored.db";
  CtlRun refused = Crmctl("--database_url=sqlite:" + restored + " restore " + backup);
  EXPECT_EQ(refused.status, 1) << refused.out;  // without --yes: says what it would do
  CtlRun r = Crmctl("--database_url=sqlite:" + restored + " restore " + backup + " --yes");
  ASSERT_EQ(r.status, 0) << r.out;
  testing::TestServer moved(testing::TestServerOptions{
      .sqlite = true, .configure = [&](Config& c) { c.database_url = "sqlite:" + restored; }});
  // Every acknowledged id is in the restored file (read directly: a thousand tool calls
  // would meet the per-token rate limit) ...
  auto db = store::Open("sqlite:" + restored, 1);
  ASSERT_TRUE(db.has_value());
  auto ids = (*db)->Read([](store::Conn& c) -> Result<std::set<int64_t>> {
    auto rows = c.Query("SELECT id FROM contacts");
    if (!rows) return Fail(rows.error());
    std::set<int64_t> out;
    for (auto& row : *rows) out.insert(row.Int(0));
    return out;
  });
  ASSERT_TRUE(ids.has_value());
  size_t missing = 0;
  for (int64_t id : before_backup) missing += ids->count(id) ? 0 : 1;
  EXPECT_EQ(missing, 0u) << "of " << before_backup.size() << " acknowledged before the backup";
  EXPECT_GE(ids->size(), before_backup.size());
  // ... and the crmd serving the restored file answers for them, first and last.
  testing::McpClient mc(moved, testing::McpClientOptions{.token = testing::MintTestToken(moved)});
  ASSERT_TRUE(mc.Initialize().ok());
  for (int64_t id : {*before_backup.begin(), *before_backup.rbegin()}) {
    auto got = mc.CallTool("get_contact", {{"id", id}});
    ASSERT_TRUE(got.ok());
    EXPECT_FALSE(got.is_tool_error()) << got.structured().dump();
    EXPECT_EQ(got.structured()["contact"].value("id", int64_t{0}), id);
  }
}

TEST(Backup, RestoreRefusesADatabaseThatCrmdHasOpen) {
  testing::TestServer server(testing::TestServerOptions{.sqlite = true});
  testing::McpClient c(server, testing::McpClientOptions{.token = testing::MintTestToken(server)});
  ASSERT_TRUE(c.Initialize().ok());
  const std::string backup = server.dir() + "/before.db";
  ASSERT_EQ(Crmctl("--database_url=sqlite:" + server.db_path() + " backup " + backup).status, 0);
  auto made = c.CallTool("create_contact", {{"email", "after-backup@example.com"}});
  ASSERT_TRUE(made.ok() && !made.is_tool_error()) << made.structured().dump();
  const int64_t id = made.structured()["contact"].value("id", int64_t{0});

  CtlRun refused =
      Crmctl("--database_url=sqlite:" + server.db_path() + " restore " + backup + " --yes");
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_NE(refused.out.find("is open in process " + std::to_string(::getpid())), std::string::npos)
      << refused.out;
  // The same database through a symbolic link is the same database.
  const std::string link = server.dir() + "/link.db";
  ASSERT_EQ(::symlink(server.db_path().c_str(), link.c_str()), 0);
  CtlRun through_link = Crmctl("--database_url=sqlite:" + link + " restore " + backup + " --yes");
  EXPECT_EQ(through_link.status, 1) << through_link.out;
  EXPECT_NE(through_link.out.find("is open in process"), std::string::npos) << through_link.out;
  // Nothing was replaced: the contact written after the backup is still served.
  auto got = c.CallTool("get_contact", {{"id", id}});
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got.is_tool_error()) << got.structured().dump();
}

TEST(Backup, RefusesWhatItCannotDo) {
  testing::TempDir dir;
  CtlRun no_db =
      Crmctl("--database_url=sqlite:" + dir.path() + "/nothing.db backup " + dir.path() + "/b.db");
  EXPECT_NE(no_db.status, 0) << no_db.out;
  CtlRun pg =
      Crmctl("--database_url=postgresql://nobody@127.0.0.1:1/x backup " + dir.path() + "/b.db");
  EXPECT_EQ(pg.status, 2) << pg.out;
  EXPECT_NE(pg.out.find("pg_dump"), std::string::npos) << pg.out;
  std::FILE* f = std::fopen((dir.path() + "/junk.db").c_str(), "w");
  std::fputs("not a database", f);
  std::fclose(f);
  CtlRun junk = Crmctl("--database_url=sqlite:" + dir.path() + "/x.db restore " + dir.path() +
                       "/junk.db --yes");
  EXPECT_EQ(junk.status, 1) << junk.out;
}

}  // namespace
}  // namespace crmd

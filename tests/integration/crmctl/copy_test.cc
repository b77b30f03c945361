// crmctl copy: a real site (a running crmd written to through its tools, and crmctl
// commands) copied into another database, as an operator moving to PostgreSQL would run
// it. sqlite -> sqlite here; the PostgreSQL run uses the same checks.
#include "src/store/copy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "src/store/db.h"
#include "src/store/schema_info.h"
#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/support/mcp_client.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd {
namespace {

using nlohmann::json;

using testing::Crmctl;
using testing::CtlRun;

// `from`: a SQLite file; `to`: a database URL.
CtlRun Copy(const std::string& from, const std::string& to, const std::string& extra = "") {
  return Crmctl("copy --from sqlite:" + from + " --to " + to + " " + extra);
}

// A site with something in most tables: contacts, lists and tags made through the MCP
// tools (one contact deleted, so that its id is a high-water mark above the maximum), a
// campaign activated through confirm_action, API keys, a form, outgoing and incoming
// webhooks through crmctl, and seeded contacts through the services.
class CopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string token = testing::MintTestToken(server_);
    client_ =
        std::make_unique<testing::McpClient>(server_, testing::McpClientOptions{.token = token});
    ASSERT_TRUE(client_->Initialize().ok());
    auto& c = *client_;
    int64_t list = c.CallToolOk("create_list", {{"name", "Customers"}})["list"].value("id", 0);
    c.CallToolOk("create_tag", {{"name", "vip"}});
    int64_t last = 0;
    for (int i = 0; i < 12; ++i)
      last =
          c.CallToolOk("create_contact", {{"email", "p" + std::to_string(i) + "@example.com"},
                                          {"first_name", "Ünïcode \"quoted\" " + std::to_string(i)},
                                          {"tags", {"vip"}},
                                          {"lists", {"Customers"}}})["contact"]
              .value("id", int64_t{0});
    json preview = c.CallToolOk("delete_contacts", {{"ids", {last}}});
    ASSERT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
    c.CallToolOk("confirm_action", {{"confirmation_token", preview["confirmation_token"]}});
    json campaign = c.CallToolOk("create_campaign", {{"name", "Launch"},
                                                     {"subject", "Hello"},
                                                     {"from_email", "team@example.com"},
                                                     {"text_body", "Hi"},
                                                     {"audience", {{"lists", {list}}}}});
    ASSERT_FALSE(campaign.is_null());

    const std::string db = "--database_url=sqlite:" + src();
    ASSERT_EQ(Crmctl(db + " apikey create zapier").status, 0);
    ASSERT_EQ(Crmctl(db + " webhook create https://hooks.example.com/crm all").status, 0);
    ASSERT_EQ(Crmctl(db + " hook create intake '{\"email\": \"$.email\"}'").status, 0);
    std::ofstream(dir_.path() + "/form.json")
        << R"({"name": "Popup", "fields": [{"name": "email", "type": "Email", "required": true}]})";
    ASSERT_EQ(Crmctl(db + " form create " + dir_.path() + "/form.json").status, 0);
    CtlRun seeded = Crmctl(db + " seed --contacts 150");
    ASSERT_EQ(seeded.status, 0) << seeded.out;
    WaitUntilQuiet();
  }

  // The site's background loops (webhook deliveries, automation triggers) consume the
  // events made above within a moment; the first copy is of a site at rest, so that its
  // verification compares like with like. Rows that change later are what --resync is for.
  void WaitUntilQuiet() {
    auto from = store::Open("sqlite:" + src(), 1);
    ASSERT_TRUE(from);
    auto before = Sums(**from);
    int still = 0;  // consecutive unchanged looks; 3 x 700 ms outlasts every poll interval
    for (int i = 0; i < 100 && still < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
      auto now = Sums(**from);
      still = now == before ? still + 1 : 0;
      before = std::move(now);
    }
    if (still >= 3) return;
    FAIL() << "the site never came to rest";
  }

  std::string src() const { return server_.db_path(); }
  // The destination: a SQLite file, or a fresh PostgreSQL database in the pg. run.
  std::string dst() const { return dst_->url(); }

  // Every copied table: name -> (rows, checksum), computed here rather than by crmctl.
  std::map<std::string, store::TableSum> Sums(store::Database& db) {
    std::map<std::string, store::TableSum> out;
    auto st = db.Read([&](store::Conn& c) -> Status {
      auto tables = store::ListTables(c);
      if (!tables) return Fail(tables.error());
      for (const auto& t : *tables) {
        if (t == "schema_migrations" || t == "copy_progress") continue;
        auto s = store::ChecksumTable(c, t);
        if (!s) return Fail(s.error());
        out[t] = *s;
      }
      return Ok();
    });
    EXPECT_TRUE(st.has_value()) << st.error().detail;
    return out;
  }

  int64_t Scalar(store::Database& db, const std::string& sql) {
    auto v = db.Read([&](store::Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne(sql);
      if (!row) return Fail(row.error());
      return *row ? (*row)->Int(0) : -1;
    });
    return v ? *v : -2;
  }

  void ExpectSameAsSource() {
    auto from = store::OpenCopySource("sqlite:" + src());
    auto to = store::Open(dst(), 1);
    ASSERT_TRUE(from && to);
    auto a = Sums(**from);
    auto b = Sums(**to);
    EXPECT_GT(a.size(), 20u);
    for (const auto& [table, sum] : a) {
      ASSERT_TRUE(b.count(table)) << table;
      EXPECT_EQ(sum.rows, b[table].rows) << table;
      EXPECT_EQ(sum.sum, b[table].sum) << table;
    }
    // Ids and their high-water mark: the next contact gets the same id on both sides.
    const std::string next = "SELECT " + store::NextIdSql("contacts");
    EXPECT_EQ(Scalar(**from, next), Scalar(**to, next));
    EXPECT_GT(Scalar(**to, "SELECT last_id FROM id_high_water WHERE tbl = 'contacts'"), 0);
  }

  // The source site is SQLite on every run (copy reads sqlite:PATH).
  // The assistant confirms the campaign alone: this suite is about copying, not approval.
  testing::TestServer server_{testing::TestServerOptions{
      .sqlite = true,
      // The webhook worker stays idle: otherwise it dispatches the seeded contacts' events
      // (deliveries, attempts, cursors) between the copy and the comparison below, which
      // then races it (seen on every pg. run on a loaded machine).
      .configure = [](Config& c) { c.webhook_poll_interval_ms = 3'600'000; },
      .approval_policy = testing::AssistantMayConfirmAlone()}};
  testing::TempDir dir_;
  std::unique_ptr<testing::ScratchDatabase> dst_ =
      std::make_unique<testing::ScratchDatabase>(dir_.path() + "/copy.db");
  std::unique_ptr<testing::McpClient> client_;
};

TEST_F(CopyTest, CopiesEveryTableOfARunningSiteWithItsIdsAndVerifies) {
  CtlRun r = Copy(src(), dst());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("tables verified"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << r.out;
  for (const char* table : {"contacts", "id_high_water", "settings", "grants", "webhook_endpoints",
                            "incoming_webhooks", "api_keys", "forms", "campaigns", "audit_log"})
    EXPECT_NE(r.out.find(std::string("\n") + table + " "), std::string::npos) << table << r.out;
  ExpectSameAsSource();

  // The site kept running; the operator stops it and runs the final copy, which appends
  // what was added since and copies again whatever was changed since.
  client_->CallToolOk("create_contact", {{"email", "late@example.com"}});
  server_.app().Stop();
  CtlRun again = Copy(src(), dst(), "--resync");
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("contacts: 1 rows copied"), std::string::npos) << again.out;
  ExpectSameAsSource();

  // The moved site serves from the destination: new contacts take fresh ids, and the
  // rows that engines number themselves (outbox events, audit rows) do not collide with
  // copied ones.
  testing::TestServer moved(testing::TestServerOptions{
      .sqlite = true, .configure = [&](Config& c) { c.database_url = dst(); }});
  testing::McpClient mc(moved, testing::McpClientOptions{.token = testing::MintTestToken(moved)});
  ASSERT_TRUE(mc.Initialize().ok());
  json made = mc.CallToolOk("create_contact", {{"email", "after-move@example.com"}});
  auto to = store::Open(dst(), 1);
  ASSERT_TRUE(to);
  EXPECT_GT(made["contact"].value("id", int64_t{0}),
            Scalar(**to, "SELECT MAX(id) FROM contacts WHERE email <> 'after-move@example.com'"));
  EXPECT_EQ(Scalar(**to, "SELECT COUNT(*) FROM outbox_events WHERE data LIKE '%after-move@%'"), 1);
}

TEST_F(CopyTest, AnInterruptedCopyResumesWhereItStoppedWithoutDuplicates) {
  server_.app().Stop();  // the final copy of a stopped site: every run must verify
  ASSERT_EQ(Crmctl("--database_url=sqlite:" + src() + " seed --contacts 3000").status, 0);
  CtlRun first = Copy(src(), dst(), "--batch 1 --max-rows 7");
  ASSERT_EQ(first.status, 3) << first.out;
  EXPECT_NE(first.out.find("stopped after 7 rows"), std::string::npos) << first.out;
  {
    auto to = store::Open(dst(), 1);
    ASSERT_TRUE(to);
    EXPECT_EQ(Scalar(**to, "SELECT SUM(rows_copied) FROM copy_progress"), 7);
  }
  // Several more slices, each stopped in the middle of some table.
  for (int i = 0; i < 3; ++i) {
    CtlRun slice = Copy(src(), dst(), "--batch 4 --max-rows 45");
    ASSERT_EQ(slice.status, 3) << slice.out;
  }
  // A run killed (SIGKILL) in the middle, once it has finished a table or two: what it
  // committed stays, the batch it was writing is rolled back.
  const std::string log = dir_.path() + "/killed.log";
  CtlRun killed = Crmctl("copy --from sqlite:" + src() + " --to " + dst() + " --batch 1 > " + log +
                         " 2>&1 & pid=$!; "
                         "for i in $(seq 1 1000); do [ -s " +
                         log +
                         " ] && break; sleep 0.01; done; "
                         "kill -9 $pid; wait $pid; echo exit=$?");
  EXPECT_NE(killed.out.find("exit=137"), std::string::npos) << killed.out;
  CtlRun rest = Copy(src(), dst(), "--batch 50");
  ASSERT_EQ(rest.status, 0) << rest.out;
  EXPECT_NE(rest.out.find("tables verified"), std::string::npos) << rest.out;
  ExpectSameAsSource();
}

TEST_F(CopyTest, RefusesADestinationHoldingDataItDidNotCopy) {
  ASSERT_EQ(Crmctl("--database_url=" + dst() + " apikey create other").status, 0);
  CtlRun r = Copy(src(), dst());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("already holds data"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("api_keys"), std::string::npos) << r.out;
  auto to = store::Open(dst(), 1);
  ASSERT_TRUE(to);
  EXPECT_EQ(Scalar(**to, "SELECT COUNT(*) FROM contacts"), 0);  // nothing was written
  auto tables = (*to)->Read([](store::Conn& c) { return store::ListTables(c); });
  ASSERT_TRUE(tables);
  EXPECT_EQ(std::count(tables->begin(), tables->end(), "copy_progress"), 0);

  CtlRun missing = Crmctl("copy --from sqlite:" + dir_.path() + "/nope.db --to sqlite:" + dst());
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_EQ(Crmctl("copy --from sqlite:" + src()).status, 2);  // usage
  EXPECT_EQ(Copy(src(), "sqlite:" + src()).status, 2);
  EXPECT_EQ(Copy(src(), "sqlite:" + server_.dir() + "/../" +
                            server_.dir().substr(server_.dir().rfind('/') + 1) + "/crmd.db")
                .status,
            2);
}

TEST_F(CopyTest, ATamperedDestinationFailsTheVerification) {
  ASSERT_EQ(Copy(src(), dst()).status, 0);
  {
    auto to = store::Open(dst(), 1);
    ASSERT_TRUE(to);
    auto st = (*to)->Write([](store::Conn& c) -> Status {
      auto a = c.Exec(
          "UPDATE contacts SET email = 'evil@example.com' "
          "WHERE id = (SELECT MIN(id) FROM contacts)");
      if (!a) return Fail(a.error());
      auto b = c.Exec("DELETE FROM tags WHERE id = (SELECT MAX(id) FROM tags)");
      if (!b) return Fail(b.error());
      return Ok();
    });
    ASSERT_TRUE(st.has_value());
  }
  for (const char* extra : {"", "--verify-only"}) {
    CtlRun r = Copy(src(), dst(), extra);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("MISMATCH (checksum"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("MISMATCH (row count)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("differ"), std::string::npos) << r.out;
  }
  // --resync copies the differing tables (and those referring to them) again.
  server_.app().Stop();
  CtlRun repaired = Copy(src(), dst(), "--resync");
  ASSERT_EQ(repaired.status, 0) << repaired.out;
  EXPECT_NE(repaired.out.find("copied again"), std::string::npos) << repaired.out;
  ExpectSameAsSource();
}

}  // namespace
}  // namespace crmd

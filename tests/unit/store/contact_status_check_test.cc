// Migration 0058 (schemas/db/sqlite/0058_contact_status_check.sql): the contacts' status
// CHECK as comparisons, so that SQLite builds no temporary B-tree for every contact it
// inserts; the same statuses allowed and refused as before.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "src/store/db.h"
#include "tests/support/test_server.h"

namespace crmd::store {
namespace {

constexpr const char* kInForm =
    "CHECK (status IN ('pending','subscribed','unsubscribed','bounced','complained'))";
constexpr const char* kOrForm =
    "CHECK (status = 'pending' OR status = 'subscribed' OR status = 'unsubscribed' OR "
    "status = 'bounced' OR status = 'complained')";

// The first column of the first row of `sql`, as text.
std::string Text(Database& db, const std::string& sql) {
  auto text = db.Read([&](Conn& c) -> Result<std::string> {
    auto row = c.QueryOne(sql);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Errc::kNotFound, "no row");
    return (*row)->Str(0);
  });
  EXPECT_TRUE(text.has_value()) << sql;
  return text ? *text : std::string();
}

std::string ContactsSql(Database& db) {
  return Text(db, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'contacts'");
}

// Whether the program SQLite compiles for a contact INSERT opens a temporary table.
bool InsertBuildsATable(Database& db) {
  return *db.Write([](Conn& c) -> Result<bool> {
    auto rows = c.Query(
        "EXPLAIN INSERT INTO contacts (email, status, created_at, updated_at) VALUES (?, ?, 1, 1)");
    if (!rows) return Fail(rows.error());
    for (const auto& r : *rows)
      if (r.Str(1) == "OpenEphemeral") return true;
    return false;
  });
}

Result<int64_t> InsertContact(Database& db, const std::string& email, const std::string& status) {
  return db.Write([&](Conn& c) {
    return c.Exec(
        "INSERT INTO contacts (email, status, created_at, updated_at) VALUES (?, ?, 1, 1)",
        {email, status});
  });
}

TEST(ContactStatusCheck, AFreshDatabaseChecksTheStatusWithoutATableARow) {
  testing::TempDir dir;
  auto db = std::move(*Open("sqlite:" + dir.path() + "/a.db"));
  const std::string sql = ContactsSql(*db);
  EXPECT_NE(sql.find(kOrForm), std::string::npos) << sql;
  EXPECT_EQ(sql.find("status IN"), std::string::npos) << sql;
  EXPECT_FALSE(InsertBuildsATable(*db));
  int n = 0;
  for (const char* status : {"pending", "subscribed", "unsubscribed", "bounced", "complained"})
    EXPECT_TRUE(InsertContact(*db, "a" + std::to_string(++n) + "@example.com", status)) << status;
  for (const char* status : {"active", "", "Subscribed", "pending "})
    EXPECT_FALSE(InsertContact(*db, "b" + std::to_string(++n) + "@example.com", status)) << status;
}

TEST(ContactStatusCheck, ADatabaseMigratedBeforeHasItsCheckRewrittenAndKeepsItsRows) {
  testing::TempDir dir;
  const std::string url = "sqlite:" + dir.path() + "/a.db";
  {
    auto db = std::move(*Open(url));
    ASSERT_TRUE(InsertContact(*db, "kept@example.com", "subscribed"));
    // Back to the CHECK as migration 0001 wrote it, and 0058 not applied yet.
    ASSERT_TRUE(db->Write([](Conn& c) -> Result<int64_t> {
      const std::string revert =
          std::string(
              "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace(sql, '") +
          "CHECK (status = ''pending'' OR status = ''subscribed'' OR status = ''unsubscribed'' OR "
          "status = ''bounced'' OR status = ''complained'')', '" +
          "CHECK (status IN "
          "(''pending'',''subscribed'',''unsubscribed'',''bounced'',''complained''))') "
          "WHERE type = 'table' AND name = 'contacts'; PRAGMA writable_schema = RESET; "
          "CREATE TABLE bump (x); DROP TABLE bump; DELETE FROM schema_migrations WHERE version = "
          "58;";
      if (auto st = c.ExecScript(revert); !st) return Fail(st.error());
      return int64_t{0};
    }));
    ASSERT_NE(ContactsSql(*db).find(kInForm), std::string::npos);
    ASSERT_TRUE(InsertBuildsATable(*db));  // what 0058 removes
  }
  auto db = std::move(*Open(url));  // applies 0058 again
  const std::string sql = ContactsSql(*db);
  EXPECT_NE(sql.find(kOrForm), std::string::npos) << sql;
  EXPECT_FALSE(InsertBuildsATable(*db));
  EXPECT_EQ(Text(*db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(Text(*db, "SELECT email || ' ' || status FROM contacts"),
            "kept@example.com subscribed");
  EXPECT_FALSE(InsertContact(*db, "bad@example.com", "active"));
  EXPECT_TRUE(InsertContact(*db, "new@example.com", "bounced"));
}

}  // namespace
}  // namespace crmd::store

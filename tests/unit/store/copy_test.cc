// store::CopyDatabase and schema_info on hand-made schemas: composite and text keys,
// foreign-key order, the value types the checksum tells apart, refusal and resumption.
#include "src/store/copy.h"

#include <gtest/gtest.h>

#include "src/store/schema_info.h"
#include "src/store/sqlite.h"
#include "tests/support/test_server.h"

namespace crmd::store {
namespace {

// Children declared before their parents, so only a foreign-key order copies them.
constexpr const char* kSchema = R"(
  CREATE TABLE "child ""quoted""" (a TEXT NOT NULL, b INTEGER NOT NULL, parent_id INTEGER
    REFERENCES parent(id), v, PRIMARY KEY (b, a));
  CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT);
  CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY);
)";

std::unique_ptr<Database> Make(const std::string& path, bool with_rows) {
  auto db = OpenSqlite(path, 1);
  EXPECT_TRUE(db.has_value());
  auto st = (*db)->Write([&](Conn& c) -> Status {
    if (auto s = c.ExecScript(kSchema); !s) return s;
    if (!with_rows) return Ok();
    return c.ExecScript(R"(
      INSERT INTO parent VALUES (1, 'one'), (2, NULL), (7, 'seven');
      INSERT INTO "child ""quoted""" VALUES ('x', 1, 1, 1), ('y', 1, 2, '1'), ('b', 2, NULL, 1.0),
        ('a', 2, 7, NULL), ('É', 3, 7, 'text with '' quote');
      INSERT INTO schema_migrations VALUES (1);
    )");
  });
  EXPECT_TRUE(st.has_value()) << st.error().detail;
  return std::move(*db);
}

TEST(SchemaInfo, ListsTablesColumnsKeysAndReferences) {
  testing::TempDir dir;
  auto db = Make(dir.path() + "/a.db", false);
  auto st = db->Read([](Conn& c) -> Status {
    auto tables = ListTables(c);
    EXPECT_EQ(*tables,
              (std::vector<std::string>{"child \"quoted\"", "parent", "schema_migrations"}));
    auto cols = ListColumns(c, "child \"quoted\"");
    EXPECT_EQ(cols->size(), 4u);
    EXPECT_EQ((*cols)[0].name, "a");
    EXPECT_EQ((*cols)[0].pk_position, 2);
    EXPECT_EQ((*cols)[1].pk_position, 1);
    EXPECT_EQ((*cols)[2].pk_position, 0);
    EXPECT_EQ(*ListReferencedTables(c, "child \"quoted\""), std::vector<std::string>{"parent"});
    EXPECT_TRUE(ListColumns(c, "nope")->empty());
    return Ok();
  });
  EXPECT_TRUE(st.has_value());
  EXPECT_EQ(QuoteIdentifier("a\"b"), "\"a\"\"b\"");
}

TEST(Copy, CopiesParentsFirstAndVerifiesEveryTable) {
  testing::TempDir dir;
  auto from = Make(dir.path() + "/from.db", true);
  auto to = Make(dir.path() + "/to.db", false);
  auto report = CopyDatabase(*from, *to, {.batch = 2});
  ASSERT_TRUE(report.has_value()) << report.error().message << report.error().detail;
  EXPECT_TRUE(report->ok());
  ASSERT_EQ(report->tables.size(), 2u);  // schema_migrations is not copied
  EXPECT_EQ(report->tables[0].table, "parent");
  EXPECT_EQ(report->tables[1].source_rows, 5);
  EXPECT_EQ(report->rows_copied, 8);
}

TEST(Copy, TheChecksumTellsIntegerRealTextAndNullApart) {
  testing::TempDir dir;
  auto db = Make(dir.path() + "/a.db", true);
  std::set<std::string> sums;
  for (const char* v : {"1", "'1'", "1.0", "NULL", "''"}) {
    auto sum = db->Write([&](Conn& c) -> Result<TableSum> {
      auto u =
          c.Exec(std::string("UPDATE \"child \"\"quoted\"\"\" SET v = ") + v + " WHERE a = 'x'");
      if (!u) return Fail(u.error());
      return ChecksumTable(c, "child \"quoted\"");
    });
    ASSERT_TRUE(sum.has_value());
    sums.insert(sum->sum);
  }
  EXPECT_EQ(sums.size(), 5u);
}

TEST(Copy, StopsResumesAndRefusesForeignRows) {
  testing::TempDir dir;
  auto from = Make(dir.path() + "/from.db", true);
  auto to = Make(dir.path() + "/to.db", false);
  auto part = CopyDatabase(*from, *to, {.batch = 1, .max_rows = 4});
  ASSERT_TRUE(part.has_value());
  EXPECT_TRUE(part->stopped_early);
  EXPECT_EQ(part->rows_copied, 4);
  auto rest = CopyDatabase(*from, *to, {.batch = 1});
  ASSERT_TRUE(rest.has_value());
  EXPECT_TRUE(rest->ok());
  EXPECT_EQ(rest->rows_copied, 4);

  auto other = Make(dir.path() + "/other.db", false);
  ASSERT_TRUE(
      other->Write([](Conn& c) { return c.Exec("INSERT INTO parent VALUES (9, 'mine')"); }));
  auto refused = CopyDatabase(*from, *other, {});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, Errc::kAlreadyExists);
  // Unless the table is one the destination's migrations fill.
  auto seeded = CopyDatabase(*from, *other, {.seeded_tables = {"parent"}});
  ASSERT_TRUE(seeded.has_value());
  EXPECT_TRUE(seeded->ok());
}

}  // namespace
}  // namespace crmd::store

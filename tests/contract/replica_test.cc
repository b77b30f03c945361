// The read router of database_read_url (src/store/replica.h): reads go to the standby,
// writes to the primary. Two scratch databases stand in for a primary and its standby; the
// real streaming standby, replay paused and the standby stopped, is tests/e2e/multinode.sh's.
#include "src/store/replica.h"

#include <gtest/gtest.h>

#include "src/store/db.h"
#include "tests/support/test_database.h"
#include "tests/support/test_server.h"

namespace crmd::store {
namespace {

using crmd::testing::ScratchDatabase;
using crmd::testing::TempDir;

std::unique_ptr<Database> OpenWithRow(const ScratchDatabase& scratch, const std::string& name) {
  auto db = Open(scratch.url(), 2);
  EXPECT_TRUE(db) << db.error().detail;
  auto st = (*db)->Write([&](Conn& c) -> Status {
    if (auto made = c.ExecScript("CREATE TABLE kv (id BIGINT PRIMARY KEY, name TEXT NOT NULL)");
        !made)
      return made;
    auto ins = c.Exec("INSERT INTO kv (id, name) VALUES (1, ?)", {name});
    if (!ins) return Fail(ins.error());
    return Ok();
  });
  EXPECT_TRUE(st) << st.error().detail;
  return std::move(*db);
}

Result<std::string> NameOf(Database& db, int64_t id, bool one_statement) {
  auto read = [id](Conn& c) -> Result<std::string> {
    auto row = c.QueryOne("SELECT name FROM kv WHERE id = ?", {id});
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Errc::kNotFound, "no row");
    return (*row)->Str(0);
  };
  return one_statement ? db.ReadStatement(read) : db.Read(read);
}

TEST(ReplicaRouted, ReadsGoToTheStandbyAndWritesToThePrimary) {
  TempDir dir;
  ScratchDatabase primary_db(dir.path() + "/primary.db"), standby_db(dir.path() + "/standby.db");
  auto primary = OpenWithRow(primary_db, "on the primary");
  ReplicaRouted routed(OpenWithRow(standby_db, "on the standby"), *primary);
  EXPECT_EQ(routed.dialect(), primary->dialect());
  EXPECT_EQ(*NameOf(routed, 1, false), "on the standby");
  EXPECT_EQ(*NameOf(routed, 1, true), "on the standby");
  auto w = routed.Write([](Conn& c) {
    return c.Exec("INSERT INTO kv (id, name) VALUES (2, 'written through the router')");
  });
  ASSERT_TRUE(w) << w.error().detail;
  EXPECT_EQ(*NameOf(*primary, 2, false), "written through the router");
  // The standby never saw the write (here: it is another database; on a real standby it
  // arrives by replication).
  EXPECT_EQ(NameOf(routed, 2, false).error().code, Errc::kNotFound);
}

TEST(ReplicaRouted, AnErrorOfTheCallbackIsTheAnswerNotARetryOnThePrimary) {
  TempDir dir;
  ScratchDatabase primary_db(dir.path() + "/primary.db"), standby_db(dir.path() + "/standby.db");
  auto primary = OpenWithRow(primary_db, "on the primary");
  ReplicaRouted routed(OpenWithRow(standby_db, "on the standby"), *primary);
  int calls = 0;
  auto r = routed.Read([&](Conn&) -> Status {
    ++calls;
    return Fail(Errc::kInvalidArgument, "refused by the callback");
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(calls, 1);
}

TEST(ReplicaRouted, OpeningRefusesAnythingButPostgreSQL) {
  TempDir dir;
  ScratchDatabase primary_db(dir.path() + "/primary.db");
  auto primary = OpenWithRow(primary_db, "p");
  auto sqlite = OpenReplicaRouted("sqlite:" + dir.path() + "/standby.db", *primary, 2);
  ASSERT_FALSE(sqlite);
  EXPECT_EQ(sqlite.error().code, Errc::kInvalidArgument);
  if (primary->dialect() != Dialect::kPostgres) return;
  // A standby that cannot be reached at start is an error, as database_url is, and the
  // answer never repeats the URL (it may hold a password).
  auto gone = OpenReplicaRouted("postgresql://crmd:secret-pw@127.0.0.1:1/crmd", *primary, 2);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, Errc::kUnavailable);
  EXPECT_EQ(gone.error().message.find("secret-pw"), std::string::npos);
  EXPECT_EQ(gone.error().detail.find("secret-pw"), std::string::npos);
}

}  // namespace
}  // namespace crmd::store

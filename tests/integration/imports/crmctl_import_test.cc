// crmctl contacts import, run as an operator would: the real crmctl binary on a real
// database (SQLite file, or PostgreSQL in the pg.* variants), a file with every kind of
// bad row, the summary, the error file and the exit status.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "src/store/db.h"
#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/support/test_database.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

struct CrmctlImport : ::testing::Test {
  testing::TempDir dir;
  testing::ScratchDatabase scratch{dir.path() + "/import.db"};

  testing::CtlRun Ctl(const std::string& args, bool with_stderr = true) {
    return testing::Crmctl("--database_url=" + scratch.url() + " " + args, with_stderr);
  }
  std::string File(const std::string& name, const std::string& text) {
    std::string path = dir.path() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  int64_t Count(const std::string& sql) {
    auto db = store::Open(scratch.url(), 1);
    EXPECT_TRUE(db);
    if (!db) return -1;
    auto r = (*db)->Read([&](store::Conn& c) { return c.QueryOne(sql); });
    EXPECT_TRUE(r && *r);
    return r && *r ? (**r).Int(0) : -1;
  }
};

TEST_F(CrmctlImport, ImportsAFileWithEveryKindOfBadRowAndReportsEachWithItsLine) {
  std::string file = File("people.csv",
                          "\xEF\xBB\xBF"
                          "email;first_name;status;tags;Company\r\n"
                          "ann@example.com;Ann;;vip|press;ACME\r\n"
                          "bad-address;B;;;\r\n"
                          "cid@example.com;Cid;retired;;\r\n"
                          "dee@example.com;\"Dee \"\"D\"\"\r\nDoe\";;;\r\n"
                          ";nobody;;;\r\n"
                          "ann@example.com;;;;Other Co\r\n");
  testing::CtlRun r = Ctl("contacts import " + file + " --tag=imported", false);
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "done");
  EXPECT_EQ(j["rows_total"], 6);
  EXPECT_EQ(j["rows_done"], 6);
  EXPECT_EQ(j["created"], 2);
  EXPECT_EQ(j["updated"], 1);
  EXPECT_EQ(j["invalid"], 3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts"), 2);
  // The quoted name with a doubled quote and a CRLF inside: 12 characters as written.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE first_name LIKE 'Dee \"D\"%Doe' AND "
                  "LENGTH(first_name) = 12"),
            1);

  testing::CtlRun errors = Ctl("contacts import-errors " + std::to_string(j["id"].get<int>()));
  ASSERT_EQ(errors.status, 0) << errors.out;
  EXPECT_EQ(errors.out,
            "line,email,reason\r\n"
            "3,bad-address,bad address\r\n"
            "4,cid@example.com,"
            "\"status must be pending, subscribed, unsubscribed, bounced or complained\"\r\n"
            "7,,no email\r\n");
}

TEST_F(CrmctlImport, RefusesAFileThatIsNotUtf8WithTheReasonAndExitsNonZero) {
  std::string file = File("latin1.csv", "email,name\nrene@example.com,Ren\xE9\n");
  testing::CtlRun r = Ctl("contacts import " + file);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("the file is not UTF-8 text"), std::string::npos) << r.out;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM imports"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts"), 0);
}

TEST_F(CrmctlImport, RefusesAFileWithoutAnEmailColumnAndOneTooLarge) {
  std::string nomail = File("nomail.csv", "name,phone\nAnn,1\n");
  testing::CtlRun r = Ctl("contacts import " + nomail);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("no email column"), std::string::npos) << r.out;
  std::string big = File("big.csv", "email\n" + std::string(200, 'a') + "@example.com\n");
  testing::CtlRun too_big = Ctl("--import_max_bytes=100 contacts import " + big);
  EXPECT_EQ(too_big.status, 1);
  EXPECT_NE(too_big.out.find("larger than import_max_bytes (100 bytes)"), std::string::npos)
      << too_big.out;
}

TEST_F(CrmctlImport, SubscribedNeedsAConsentNoteAndTheMapAndDryRunOptionsWork) {
  std::string file = File("p.csv", "Mail,Vorname\nzoe@example.com,Zoe\n");
  testing::CtlRun refused =
      Ctl("contacts import " + file + " --status=subscribed --map=Mail=email");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.out.find("consent"), std::string::npos) << refused.out;
  testing::CtlRun dry =
      Ctl("contacts import " + file + " --map=Mail=email,Vorname=first_name --dry_run", false);
  ASSERT_EQ(dry.status, 0) << dry.out;
  EXPECT_EQ(nlohmann::json::parse(dry.out)["created"], 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts"), 0);
  testing::CtlRun real = Ctl("contacts import " + file +
                                 " --map=Mail=email,Vorname=first_name --status=subscribed "
                                 "'--consent=signed the paper form at the fair'",
                             false);
  ASSERT_EQ(real.status, 0) << real.out;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE status = 'subscribed' AND "
                  "first_name = 'Zoe'"),
            1);
}

}  // namespace
}  // namespace crmd

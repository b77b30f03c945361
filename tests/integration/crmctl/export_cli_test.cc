// crmctl contacts export, run as an operator would, against a real SQLite file: the CSV on
// stdout, the filters, and a clear message and a non-zero exit for bad options.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

testing::CtlRun ExportCtl(const std::string& db, const std::string& args, bool with_stderr) {
  return testing::Crmctl("--database_url=sqlite:" + db + " " + args, with_stderr);
}

size_t Records(const std::string& csv) {
  size_t n = 0;
  for (size_t p = 0; (p = csv.find("\r\n", p)) != std::string::npos; p += 2) ++n;
  return n;
}

TEST(CrmctlContactsExport, WritesEverySeededContactAsCsvOnStdout) {
  testing::TempDir dir;
  std::string db = dir.path() + "/export.db";
  ASSERT_EQ(ExportCtl(db, "seed --contacts 120 --lists 2 --tags 3", true).status, 0);
  testing::CtlRun all = ExportCtl(db, "contacts export", false);
  ASSERT_EQ(all.status, 0) << all.out.substr(0, 400);
  EXPECT_EQ(all.out.rfind("email,first_name,last_name,phone,status,type,lists,tags", 0), 0u)
      << all.out.substr(0, 200);
  EXPECT_EQ(Records(all.out), 121u);
  testing::CtlRun subscribed = ExportCtl(db, "contacts export --status subscribed", false);
  ASSERT_EQ(subscribed.status, 0);
  EXPECT_LT(Records(subscribed.out), 121u);
  EXPECT_GE(Records(subscribed.out), 1u);
  // The summary goes to stderr, never into the file.
  testing::CtlRun both = ExportCtl(db, "contacts export", true);
  EXPECT_NE(both.out.find("120 contacts exported"), std::string::npos);
}

TEST(CrmctlContactsExport, BadOptionsFailWithAMessage) {
  testing::TempDir dir;
  std::string db = dir.path() + "/bad.db";
  ASSERT_EQ(ExportCtl(db, "seed --contacts 3", true).status, 0);
  testing::CtlRun unknown = ExportCtl(db, "contacts export --colour red", true);
  EXPECT_EQ(unknown.status, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("--colour"), std::string::npos) << unknown.out;
  testing::CtlRun status = ExportCtl(db, "contacts export --status happy", true);
  EXPECT_EQ(status.status, 1) << status.out;
  EXPECT_NE(status.out.find("status"), std::string::npos) << status.out;
  testing::CtlRun tag = ExportCtl(db, "contacts export --tag nope", true);
  EXPECT_EQ(tag.status, 1) << tag.out;
  EXPECT_NE(tag.out.find("not found"), std::string::npos) << tag.out;
}

}  // namespace
}  // namespace crmd

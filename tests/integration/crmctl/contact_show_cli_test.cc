// crmctl contacts show EMAIL [--all], run as an operator would: the real crmctl binary on a
// real database (SQLite file, or PostgreSQL in the pg.* variants). A contact imported with
// crmctl and then suppressed by hand shows as get_contact answers it, and with --all as the
// export document; bad arguments fail with a message and a non-zero exit.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/support/test_database.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

struct CrmctlContactShow : ::testing::Test {
  testing::TempDir dir;
  testing::ScratchDatabase scratch{dir.path() + "/show.db"};

  testing::CtlRun Ctl(const std::string& args, bool with_stderr = true) {
    return testing::Crmctl("--database_url=" + scratch.url() + " " + args, with_stderr);
  }
  void SetUp() override {
    std::string path = dir.path() + "/people.csv";
    std::ofstream(path, std::ios::binary) << "email,first_name,company\nhal@example.com,Hal,ACME\n";
    testing::CtlRun imported = Ctl(
        "contacts import " + path + " --tag=fair --status=subscribed '--consent=ticked the box'",
        false);
    ASSERT_EQ(imported.status, 0) << imported.out;
    ASSERT_EQ(Ctl("suppression add hal@example.com --reason manual").status, 0);
  }
};

TEST_F(CrmctlContactShow, ShowsTheContactAndWithAllEverythingKeptAboutThePerson) {
  testing::CtlRun plain = Ctl("contacts show HAL@example.com", false);
  ASSERT_EQ(plain.status, 0) << plain.out;
  auto contact = nlohmann::json::parse(plain.out, nullptr, false);
  ASSERT_TRUE(contact.is_object()) << plain.out;
  EXPECT_EQ(contact["contact"]["email"], "hal@example.com");
  EXPECT_EQ(contact["suppression"]["reason"], "manual");
  EXPECT_FALSE(contact.contains("status_changes"));

  testing::CtlRun all = Ctl("contacts show hal@example.com --all", false);
  ASSERT_EQ(all.status, 0) << all.out;
  auto doc = nlohmann::json::parse(all.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << all.out;
  EXPECT_EQ(doc["format"], "crmd.contact_export.v1");
  EXPECT_EQ(doc["contact"]["custom_fields"]["company"], "ACME");
  EXPECT_EQ(doc["tags"][0]["name"], "fair");
  EXPECT_EQ(doc["consent"]["import_consent"], "ticked the box");
  EXPECT_TRUE(doc["consent"]["double_opt_in"].is_null());
  ASSERT_EQ(doc["status_changes"].size(), 1u) << doc["status_changes"].dump();
  EXPECT_EQ(doc["status_changes"][0]["to"], "subscribed");
  EXPECT_EQ(doc["status_changes"][0]["by"]["face"], "crmctl");
  EXPECT_TRUE(doc["messages"].empty());
  EXPECT_EQ(doc["suppression"]["reason"], "manual");
  EXPECT_FALSE(doc["audit"].empty());
}

TEST_F(CrmctlContactShow, BadArgumentsFailWithAMessage) {
  testing::CtlRun missing = Ctl("contacts show nobody@example.com --all");
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_NE(missing.out.find("no contact with email nobody@example.com"), std::string::npos)
      << missing.out;
  testing::CtlRun no_email = Ctl("contacts show");
  EXPECT_EQ(no_email.status, 2) << no_email.out;
  EXPECT_NE(no_email.out.find("contacts show EMAIL [--all]"), std::string::npos) << no_email.out;
  testing::CtlRun two = Ctl("contacts show a@example.com b@example.com");
  EXPECT_EQ(two.status, 2) << two.out;
  testing::CtlRun flag = Ctl("contacts show hal@example.com --everything");
  EXPECT_EQ(flag.status, 2) << flag.out;
}

}  // namespace
}  // namespace crmd

// crmctl as an operator runs it: the real binary against a real SQLite file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "src/core/config.h"
#include "src/store/db.h"
#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

using testing::CtlRun;

// crmctl against the SQLite file `db`.
CtlRun CrmctlOn(const std::string& db, const std::string& args) {
  return testing::Crmctl("--database_url=sqlite:" + db + " " + args);
}

int64_t Count(store::Database& db, const std::string& table) {
  auto n = db.Read([&](store::Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne("SELECT COUNT(*) FROM " + table);  // fixed table names only
    if (!row) return Fail(row.error());
    return (*row)->Int(0);
  });
  return n ? *n : -1;
}

TEST(Crmctl, SeedFillsContactsListsTagsCampaignsAndAutomations) {
  testing::TempDir dir;
  std::string db_path = dir.path() + "/seed.db";
  CtlRun r = CrmctlOn(db_path, "seed --contacts 500");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("seeded 500 contacts"), std::string::npos) << r.out;
  auto db = store::Open("sqlite:" + db_path);
  ASSERT_TRUE(db.has_value());
  EXPECT_EQ(Count(**db, "contacts"), 500);
  EXPECT_GT(Count(**db, "lists"), 0);
  EXPECT_GT(Count(**db, "tags"), 0);
  EXPECT_GT(Count(**db, "contact_lists"), 0);
  EXPECT_GT(Count(**db, "campaigns"), 0);
  EXPECT_GT(Count(**db, "automations"), 0);
}

// --help asks for the usage, never for the work: `crmctl seed --help` seeds nothing and
// `crmd --help` starts no server (both once did, on a database in the current folder).
TEST(Crmctl, HelpShowsTheUsageAndDoesNothing) {
  testing::TempDir dir;
  std::string db_path = dir.path() + "/untouched.db";
  CtlRun seed = CrmctlOn(db_path, "seed --help");
  EXPECT_EQ(seed.status, 0) << seed.out;
  EXPECT_NE(seed.out.find("usage: crmctl"), std::string::npos) << seed.out;
  EXPECT_NE(seed.out.find("seed"), std::string::npos) << seed.out;
  EXPECT_EQ(seed.out.find("seeded"), std::string::npos) << seed.out;
  EXPECT_FALSE(std::ifstream(db_path).good()) << "crmctl seed --help created " << db_path;

  auto crmd = [&](const std::string& args) {
    std::string cmd = "cd " + dir.path() + " && " + std::string(CRMD_BINARY_DIR) +
                      "/src/app/crmd " + args + " 2>&1";
    return testing::RunCommand(cmd);
  };
  CtlRun help = crmd("--database_url=sqlite:" + db_path + " --help");
  EXPECT_EQ(help.status, 0) << help.out;
  EXPECT_NE(help.out.find("usage: crmd"), std::string::npos) << help.out;
  // It lists the configuration keys (ARCHITECTURE.md), and each one it lists is a key
  // crmd takes: setting it is never "unknown config key".
  std::vector<std::string> keys;
  std::string listed = help.out.substr(help.out.find('\n', help.out.find("README")) + 1);
  for (size_t i = 0; i < listed.size();) {
    size_t j = listed.find_first_of(", \n", i);
    if (j == std::string::npos) j = listed.size();
    if (j > i) keys.push_back(listed.substr(i, j - i));
    i = j + 1;
  }
  for (const char* k :
       {"database_url", "public_base_url", "smtp_url", "mail_from", "mail_rate_per_second",
        "mail_concurrency", "dkim_private_key_file", "dkim_selector", "dkim_domain"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k << " is not listed in\n"
                                                                  << help.out;
  EXPECT_GT(keys.size(), 40u) << help.out;
  for (const auto& key : keys) {
    Config c;
    auto st = c.Set(key, "1");
    EXPECT_TRUE(st || st.error().message.find("unknown config key") == std::string::npos) << key;
    EXPECT_EQ(std::count(keys.begin(), keys.end(), key), 1) << key << " is listed twice";
  }
  Config c;
  EXPECT_FALSE(c.Set("no_such_key", "1"));
  CtlRun stray = crmd("--database_url=sqlite:" + db_path + " serve");
  EXPECT_EQ(stray.status, 2) << stray.out;
  EXPECT_NE(stray.out.find("unexpected argument serve"), std::string::npos) << stray.out;
  EXPECT_FALSE(std::ifstream(db_path).good()) << "crmd --help created " << db_path;
}

// The approval policy is the one setting an assistant cannot change: the operator does,
// with crmctl (docs/mcp.md "Human approval").
TEST(Crmctl, SettingsApprovalPolicyShowSetAndReset) {
  testing::TempDir dir;
  std::string db_path = dir.path() + "/policy.db";
  CtlRun shown = CrmctlOn(db_path, "settings approval-policy show");
  ASSERT_EQ(shown.status, 0) << shown.out;
  EXPECT_NE(shown.out.find("delete_contacts"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("resend_campaign"), std::string::npos) << shown.out;

  CtlRun set = CrmctlOn(db_path,
                        "settings approval-policy set "
                        "'{\"require_person\":[\"delete_list\"],\"thresholds\":"
                        "{\"delete_contacts\":{\"assistant_may_confirm_up_to\":5}}}'");
  ASSERT_EQ(set.status, 0) << set.out;
  CtlRun all = CrmctlOn(db_path, "settings show");
  ASSERT_EQ(all.status, 0) << all.out;
  EXPECT_NE(all.out.find("assistant_may_confirm_up_to"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find("delete_tag"), std::string::npos) << all.out;

  CtlRun bad = CrmctlOn(db_path, "settings approval-policy set '{\"require_person\":[\"drop\"]}'");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("approval_policy.require_person.0"), std::string::npos) << bad.out;

  ASSERT_EQ(CrmctlOn(db_path, "settings approval-policy reset").status, 0);
  EXPECT_NE(CrmctlOn(db_path, "settings approval-policy show").out.find("delete_tag"),
            std::string::npos);
}

TEST(Crmctl, SeedRefusesAMalformedCount) {
  testing::TempDir dir;
  CtlRun r = CrmctlOn(dir.path() + "/bad.db", "seed --contacts many");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--contacts"), std::string::npos) << r.out;
}

TEST(Crmctl, AuditListsWhatWasWritten) {
  testing::TempDir dir;
  std::string db_path = dir.path() + "/audit.db";
  ASSERT_EQ(CrmctlOn(db_path, "seed --contacts 20").status, 0);
  CtlRun r = CrmctlOn(db_path, "audit --limit 5");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("action"), std::string::npos) << r.out;  // the header
}

TEST(Crmctl, UnknownCommandIsAUsageError) {
  testing::TempDir dir;
  CtlRun r = CrmctlOn(dir.path() + "/x.db", "frobnicate");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("unknown command"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace crmd

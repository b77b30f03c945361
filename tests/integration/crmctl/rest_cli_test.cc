// crmctl apikey and crmctl form, run as an operator would, against a real SQLite file.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "src/governance/api_keys.h"
#include "src/store/db.h"
#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

testing::CtlRun Ctl(const std::string& db, const std::string& args, bool with_stderr = true) {
  return testing::Crmctl("--database_url=sqlite:" + db + " " + args, with_stderr);
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(CrmctlForm, CreateListUpdateGetDeleteFromJsonFiles) {
  testing::TempDir dir;
  std::string db = dir.path() + "/forms.db";
  std::string file = dir.path() + "/form.json";
  Write(file, R"({"name": "Popup", "fields": [
      {"name": "email", "type": "Email", "required": true},
      {"name": "first_name", "type": "Input"},
      {"name": "hello", "type": "Heading", "label": "Hi"}],
    "applies": {"status": "subscribed", "tags": ["popup"]},
    "allowed_origins": ["https://example.com"]})");
  testing::CtlRun created = Ctl(db, "form create " + file, false);
  ASSERT_EQ(created.status, 0) << created.out;
  auto j = nlohmann::json::parse(created.out);
  int64_t id = j["id"];
  EXPECT_EQ(j["fields"].size(), 3u);
  EXPECT_EQ(j["applies"]["tags"][0], "popup");

  Write(file, R"({"name": "Popup v2", "require_key": true})");
  testing::CtlRun updated = Ctl(db, "form update " + std::to_string(id) + " " + file, false);
  ASSERT_EQ(updated.status, 0) << updated.out;
  auto u = nlohmann::json::parse(updated.out);
  EXPECT_EQ(u["name"], "Popup v2");
  EXPECT_EQ(u["require_key"], true);
  EXPECT_EQ(u["fields"].size(), 3u);  // absent members unchanged

  testing::CtlRun list = Ctl(db, "form list", false);
  ASSERT_EQ(list.status, 0);
  auto l = nlohmann::json::parse(list.out);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0]["name"], "Popup v2");

  EXPECT_EQ(Ctl(db, "form delete " + std::to_string(id)).status, 0);
  EXPECT_NE(Ctl(db, "form get " + std::to_string(id)).status, 0);
}

TEST(CrmctlForm, InvalidDefinitionNamesThePathAndFails) {
  testing::TempDir dir;
  std::string db = dir.path() + "/bad.db";
  std::string file = dir.path() + "/form.json";
  Write(file, R"({"name": "No email", "fields": [{"name": "n", "type": "Dropdown"}]})");
  testing::CtlRun r = Ctl(db, "form create " + file);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("fields[0].options"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exactly one Email field"), std::string::npos) << r.out;
  Write(file, "{not json");
  testing::CtlRun bad = Ctl(db, "form create " + file);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("not valid JSON"), std::string::npos) << bad.out;
  EXPECT_EQ(Ctl(db, "form list", false).out.find("No email"), std::string::npos);
}

TEST(CrmctlApiKey, CreateShowsTheKeyOnceListNeverShowsItDisableWorks) {
  testing::TempDir dir;
  std::string db = dir.path() + "/keys.db";
  testing::CtlRun created = Ctl(db, "apikey create zapier", false);
  ASSERT_EQ(created.status, 0) << created.out;
  auto j = nlohmann::json::parse(created.out);
  std::string secret = j["key"];
  int64_t id = j["id"];
  testing::CtlRun list = Ctl(db, "apikey list", false);
  ASSERT_EQ(list.status, 0);
  EXPECT_EQ(list.out.find(secret), std::string::npos);
  EXPECT_NE(list.out.find("zapier"), std::string::npos);
  ASSERT_EQ(Ctl(db, "apikey disable " + std::to_string(id)).status, 0);
  auto opened = store::Open("sqlite:" + db);
  ASSERT_TRUE(opened);
  SystemClock clock;
  SecureRandom random;
  governance::ApiKeys keys(**opened, clock, random);
  EXPECT_FALSE(keys.Authenticate(secret));
  ASSERT_EQ(Ctl(db, "apikey enable " + std::to_string(id)).status, 0);
  EXPECT_TRUE(keys.Authenticate(secret));
}

}  // namespace
}  // namespace crmd

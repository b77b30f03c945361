// crmctl webhook ... and crmctl hook ..., the real binary against a real SQLite file.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/store/db.h"
#include "tests/support/test_server.h"

namespace crmd::webhooktest {
namespace {

struct Run {
  int status = 0;
  std::string out;  // stdout only
};

Run Crmctl(const std::string& db, const std::vector<std::string>& args) {
  std::string cmd = std::string(CRMD_BINARY_DIR) + "/src/app/crmctl --database_url=sqlite:" + db +
                    " --public_base_url=https://crm.example.com";
  for (const auto& a : args) {
    std::string quoted = "'";
    for (char ch : a) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    cmd += " " + quoted + "'";
  }
  cmd += " 2>/dev/null";
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  r.status = pclose(p);
  return r;
}

nlohmann::json Json(const Run& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

TEST(CrmctlWebhook, CreateListDisableEnableDeliveriesRedeliverDelete) {
  crmd::testing::TempDir dir;
  const std::string db = dir.path() + "/cli.db";
  auto created = Crmctl(
      db, {"webhook", "create", "https://hooks.example.com/in", "contact.created,contact.deleted"});
  ASSERT_EQ(created.status, 0) << created.out;
  auto ep = Json(created);
  EXPECT_EQ(ep["secret"].get<std::string>().rfind("whsec_", 0), 0u);
  EXPECT_EQ(ep["events"], (nlohmann::json{"contact.created", "contact.deleted"}));
  const std::string id = std::to_string(ep["id"].get<int64_t>());

  auto list = Crmctl(db, {"webhook", "list"});
  ASSERT_EQ(list.status, 0);
  EXPECT_EQ(Json(list).size(), 1u);
  EXPECT_EQ(list.out.find(ep["secret"].get<std::string>()), std::string::npos);

  auto off = Crmctl(db, {"webhook", "disable", id});
  ASSERT_EQ(off.status, 0) << off.out;
  EXPECT_EQ(Json(off)["enabled"], false);
  auto on = Crmctl(db, {"webhook", "enable", id});
  EXPECT_EQ(Json(on)["enabled"], true);

  auto all = Crmctl(db, {"webhook", "create", "https://hooks.example.com/all", "all"});
  ASSERT_EQ(all.status, 0);
  EXPECT_EQ(Json(all)["events"].size(), 8u);

  // A delivery row, as the worker would claim it, to list and redeliver.
  {
    auto d = store::Open("sqlite:" + db, 1);
    ASSERT_TRUE(d.has_value());
    auto ins = (*d)->Write([&](store::Conn& c) {
      return c.Exec(
          "INSERT INTO webhook_deliveries (event_id, endpoint_id, event_type, contact_id, payload, "
          "status, attempts, next_attempt_at, retry_until, created_at, updated_at, completed_at) "
          "VALUES (1, ?, 'contact.created', 1, '{}', 'failed', 3, 0, 0, 0, 0, 0)",
          {ep["id"].get<int64_t>()});
    });
    ASSERT_TRUE(ins.has_value());
  }
  auto dels = Crmctl(db, {"webhook", "deliveries", id});
  ASSERT_EQ(dels.status, 0) << dels.out;
  auto dj = Json(dels);
  ASSERT_EQ(dj.size(), 1u);
  EXPECT_EQ(dj[0]["status"], "failed");
  const std::string delivery = std::to_string(dj[0]["id"].get<int64_t>());
  auto again = Crmctl(db, {"webhook", "redeliver", delivery});
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(Json(again)["status"], "pending");
  EXPECT_NE(Crmctl(db, {"webhook", "redeliver", "999"}).status, 0);
  EXPECT_EQ(Crmctl(db, {"webhook", "attempts", delivery}).status, 0);

  auto del = Crmctl(db, {"webhook", "delete", id});
  ASSERT_EQ(del.status, 0);
  EXPECT_EQ(Json(Crmctl(db, {"webhook", "list"})).size(), 1u);
  EXPECT_NE(Crmctl(db, {"webhook", "delete", id}).status, 0);
}

TEST(CrmctlWebhook, RefusesBadInputAndPrivateTargets) {
  crmd::testing::TempDir dir;
  const std::string db = dir.path() + "/bad.db";
  EXPECT_NE(Crmctl(db, {"webhook", "create", "http://127.0.0.1/x", "all"}).status, 0);
  EXPECT_NE(Crmctl(db, {"webhook", "create", "https://x.example.com/", "contact.exploded"}).status,
            0);
  EXPECT_NE(Crmctl(db, {"webhook", "frobnicate"}).status, 0);
  EXPECT_NE(Crmctl(db, {"webhook"}).status, 0);
}

TEST(CrmctlHook, CreateShowsTheUrlOnceListDisableDelete) {
  crmd::testing::TempDir dir;
  const std::string db = dir.path() + "/hook.db";
  auto created = Crmctl(db, {"hook", "create", "shop", R"({"email": "data.email"})",
                             R"({"tags": ["shop"], "status": "subscribed"})", "--hmac-secret",
                             "0123456789abcdef0123"});
  ASSERT_EQ(created.status, 0) << created.out;
  auto h = Json(created);
  const std::string url = h["url"];
  EXPECT_EQ(url.rfind("https://crm.example.com/api/crm/v1/hooks/crmd_hook_", 0), 0u) << url;
  EXPECT_EQ(h["hmac"], true);
  EXPECT_EQ(h["applies"]["status"], "subscribed");
  const std::string id = std::to_string(h["id"].get<int64_t>());

  auto list = Crmctl(db, {"hook", "list"});
  ASSERT_EQ(list.status, 0);
  EXPECT_EQ(Json(list).size(), 1u);
  EXPECT_EQ(list.out.find(url.substr(url.rfind('/') + 1)), std::string::npos);
  EXPECT_EQ(list.out.find("0123456789abcdef0123"), std::string::npos);

  EXPECT_EQ(Json(Crmctl(db, {"hook", "disable", id}))["enabled"], false);
  EXPECT_EQ(Json(Crmctl(db, {"hook", "enable", id}))["enabled"], true);
  EXPECT_EQ(Crmctl(db, {"hook", "delete", id}).status, 0);
  EXPECT_EQ(Json(Crmctl(db, {"hook", "list"})).size(), 0u);

  // Bad paths and unknown lists are refused when configured.
  EXPECT_NE(Crmctl(db, {"hook", "create", "bad", R"({"email": "data[x]"})"}).status, 0);
  EXPECT_NE(
      Crmctl(db, {"hook", "create", "bad", R"({"email": "a"})", R"({"lists": ["nope"]})"}).status,
      0);
  EXPECT_NE(Crmctl(db, {"hook", "create", "bad", "not json"}).status, 0);
}

}  // namespace
}  // namespace crmd::webhooktest

namespace crmd::webhooktest {
namespace {

TEST(CrmctlHook, HmacSecretCanComeFromStdin) {
  crmd::testing::TempDir dir;
  const std::string db = dir.path() + "/stdin.db";
  std::string cmd = "printf '0123456789abcdef0123\\n' | " + std::string(CRMD_BINARY_DIR) +
                    "/src/app/crmctl --database_url=sqlite:" + db +
                    " hook create shop '{\"email\": \"data.email\"}' --hmac-secret - 2>/dev/null";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << out;
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out;
  EXPECT_EQ(j["hmac"], true);
  // The secret is the 20 characters read, not "-": a 1-character secret would be refused.
  auto opened = store::Open("sqlite:" + db);
  ASSERT_TRUE(opened);
  auto row = (*opened)->Read(
      [](store::Conn& c) { return c.QueryOne("SELECT hmac_secret FROM incoming_webhooks"); });
  ASSERT_TRUE(row && *row);
  EXPECT_EQ((**row).Str(0), "0123456789abcdef0123");
}

}  // namespace
}  // namespace crmd::webhooktest

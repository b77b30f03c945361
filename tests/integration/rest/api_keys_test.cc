#include <gtest/gtest.h>

#include "tests/integration/rest/rest_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using crmd::testing::TestServer;

TEST(RestAuth, MissingKeyIs401ProblemJson) {
  TestServer server;
  auto r = server.Get(std::string(kBase) + "/admin/api-keys");
  EXPECT_EQ(r.status, 401);
  EXPECT_TRUE(IsProblem(r));
  auto j = JsonBody(r);
  EXPECT_EQ(j["code"], "missing_api_key");
  EXPECT_EQ(j["status"], 401);
  EXPECT_EQ(j["type"], "urn:crmd:problem:missing_api_key");
  EXPECT_TRUE(j.contains("title"));
  EXPECT_TRUE(j.contains("instance"));
  EXPECT_FALSE(j["request_id"].get<std::string>().empty());
}

TEST(RestAuth, UnknownKeyIs401) {
  TestServer server;
  auto r = server.Get(std::string(kBase) + "/admin/api-keys",
                      Bearer("crmd_live_aaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(JsonBody(r)["code"], "invalid_api_key");
}

TEST(RestAuth, KeyInQueryStringIsRefused) {
  TestServer server;
  auto key = NewKey(server, governance::ApiKeyRole::kAdmin);
  auto r = server.Get(std::string(kBase) + "/admin/api-keys?api_key=" + key, Bearer(key));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(JsonBody(r)["code"], "key_in_query");
}

TEST(RestAuth, XApiKeyHeaderWorksAndIntegrationKeyIsNotAdmin) {
  TestServer server;
  auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
  auto plain = NewKey(server);
  auto ok = server.Get(std::string(kBase) + "/admin/api-keys", {{"X-API-Key", admin}});
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(JsonBody(ok)["api_keys"].size(), 2u);
  auto denied = server.Get(std::string(kBase) + "/admin/api-keys", {{"X-API-Key", plain}});
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(JsonBody(denied)["code"], "insufficient_role");
}

TEST(RestAdminKeys, CreateShowsSecretOnceThenDisableTakesEffectAtOnce) {
  TestServer server;
  auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
  auto created =
      server.PostJson(std::string(kBase) + "/admin/api-keys", {{"name", "zapier"}}, Bearer(admin));
  ASSERT_EQ(created.status, 201) << created.body;
  auto cj = JsonBody(created);
  std::string key = cj["key"];
  int64_t id = cj["id"];
  EXPECT_EQ(cj["status"], "enabled");
  // The new key works (the admin list is admin-only, so use a 404 lookup as the probe).
  auto probe = [&] {
    return server.Get(std::string(kBase) + "/admin/api-keys", Bearer(key)).status;
  };
  EXPECT_EQ(probe(), 403);  // authenticated, but not admin
  auto list = server.Get(std::string(kBase) + "/admin/api-keys", Bearer(admin));
  EXPECT_EQ(list.body.find(key), std::string::npos);
  auto off = server.Send("PATCH", std::string(kBase) + "/admin/api-keys/" + std::to_string(id),
                         R"({"status":"disabled"})",
                         {{"Content-Type", "application/json"}, Bearer(admin)[0]});
  ASSERT_EQ(off.status, 200) << off.body;
  EXPECT_EQ(probe(), 401);
  auto del = server.Send("DELETE", std::string(kBase) + "/admin/api-keys/" + std::to_string(id), "",
                         Bearer(admin));
  EXPECT_EQ(del.status, 200);
  auto gone =
      server.Get(std::string(kBase) + "/admin/api-keys/" + std::to_string(id), Bearer(admin));
  EXPECT_EQ(gone.status, 404);
  EXPECT_TRUE(IsProblem(gone));
}

TEST(RestErrors, WrongMethodIs405WithAllow) {
  TestServer server;
  auto r = server.Send("PUT", std::string(kBase) + "/admin/api-keys");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.Header("Allow").value_or(""), "GET, HEAD, POST");
  EXPECT_TRUE(IsProblem(r));
  auto nf = server.Get(std::string(kBase) + "/nothing/here");
  EXPECT_EQ(nf.status, 404);
  EXPECT_TRUE(IsProblem(nf));
}

TEST(RestErrors, NonJsonBodyIs415AndBadJsonIs400AndOversizeIs413) {
  TestServer server({.configure = [](Config& c) { c.rest_max_body_bytes = 512; }});
  auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
  auto url = std::string(kBase) + "/admin/api-keys";
  auto ct = server.Send("POST", url, "name=x", {{"Content-Type", "text/plain"}, Bearer(admin)[0]});
  EXPECT_EQ(ct.status, 415);
  EXPECT_EQ(JsonBody(ct)["code"], "unsupported_media_type");
  auto bad =
      server.Send("POST", url, "{nope", {{"Content-Type", "application/json"}, Bearer(admin)[0]});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(JsonBody(bad)["code"], "malformed_json");
  nlohmann::json big = {{"name", std::string(2000, 'x')}};
  auto large = server.PostJson(url, big, Bearer(admin));
  EXPECT_EQ(large.status, 413);
  EXPECT_EQ(JsonBody(large)["code"], "payload_too_large");
  EXPECT_TRUE(IsProblem(large));
}

TEST(RestErrors, MissingNameIs422WithFieldErrors) {
  TestServer server;
  auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
  auto r =
      server.PostJson(std::string(kBase) + "/admin/api-keys", {{"role", "root"}}, Bearer(admin));
  EXPECT_EQ(r.status, 422);
  auto j = JsonBody(r);
  EXPECT_EQ(j["code"], "validation_failed");
  ASSERT_TRUE(j["errors"].is_array());
  EXPECT_EQ(j["errors"].size(), 2u);
}

// A service's kInvalidArgument goes through the one mapping (ProblemFromError) like every
// other: the detail is the service's sentence (it used to be "name: name must ...").
TEST(RestErrors, ServiceValidationErrorNamesTheField) {
  TestServer server;
  auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
  auto r = server.PostJson(std::string(kBase) + "/admin/api-keys",
                           {{"name", std::string(201, 'n')}}, Bearer(admin));
  EXPECT_EQ(r.status, 422);
  auto j = JsonBody(r);
  EXPECT_EQ(j["code"], "validation_failed");
  EXPECT_EQ(j["detail"], "name must be 1 to 200 characters");
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["errors"][0]["field"], "name");
  EXPECT_EQ(j["errors"][0]["code"], "invalid");
}

}  // namespace
}  // namespace crmd::resttest

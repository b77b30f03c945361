#include "auth/cimd.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "src/store/db.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_server.h"

namespace crmd::auth {
namespace {

using nlohmann::json;

constexpr const char* kUrl = "https://app.example.com/oauth/client.json";

class FakeHttpClient : public http::HttpClient {
 public:
  Result<http::ClientResponse> Send(const http::ClientRequest& request) override {
    ++calls;
    last = request;
    if (error) return Fail(*error);
    return response;
  }
  int calls = 0;
  http::ClientRequest last;
  http::ClientResponse response;
  std::optional<Error> error;
};

json Document() {
  return {{"client_id", kUrl},
          {"client_name", "Example MCP Client"},
          {"redirect_uris", {"http://127.0.0.1:3000/callback"}},
          {"grant_types", {"authorization_code", "refresh_token"}},
          {"response_types", {"code"}},
          {"token_endpoint_auth_method", "none"}};
}

class CimdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Open("sqlite:" + dir_.path() + "/t.db", 2);
    ASSERT_TRUE(db);
    db_ = std::move(*db);
    clients_ = std::make_unique<ClientStore>(*db_, clock_);
    resolver_ = std::make_unique<CimdResolver>(*clients_, http_, clock_, CimdOptions{});
    Serve(Document(), "max-age=600");
  }
  void Serve(const json& doc, std::string cache_control = "") {
    http_.response = {
        .status = 200, .headers = {{"Content-Type", "application/json"}}, .body = doc.dump()};
    if (!cache_control.empty()) http_.response.headers.emplace_back("Cache-Control", cache_control);
  }
  testing::TempDir dir_;
  FakeClock clock_;
  FakeHttpClient http_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<ClientStore> clients_;
  std::unique_ptr<CimdResolver> resolver_;
};

TEST(CimdUrl, RequiresHttpsWithAPath_CimdDraft_3) {
  EXPECT_TRUE(ValidateCimdUrl(kUrl));
  EXPECT_FALSE(ValidateCimdUrl("http://app.example.com/client.json"));
  EXPECT_FALSE(ValidateCimdUrl("https://app.example.com"));
  EXPECT_FALSE(ValidateCimdUrl("https://app.example.com/"));
  EXPECT_FALSE(ValidateCimdUrl("https://app.example.com/a#frag"));
  EXPECT_FALSE(ValidateCimdUrl("https://user@app.example.com/client.json"));
  EXPECT_FALSE(ValidateCimdUrl("https://app.example.com/a/../client.json"));
  EXPECT_FALSE(ValidateCimdUrl("https://app.example.com/./client.json"));
}

TEST(CimdCache, ClampsMaxAgeToBounds) {
  EXPECT_EQ(CimdCacheTtl(std::nullopt, 300, 86400), 300);
  EXPECT_EQ(CimdCacheTtl("max-age=3600", 300, 86400), 3600);
  EXPECT_EQ(CimdCacheTtl("public, max-age=10", 300, 86400), 300);
  EXPECT_EQ(CimdCacheTtl("max-age=99999999999999", 300, 86400), 86400);
  EXPECT_EQ(CimdCacheTtl("no-store, max-age=3600", 300, 86400), 300);
}

TEST_F(CimdTest, FetchesValidatesAndCachesTheDocument_Mcp2025_11_25) {
  auto c = resolver_->Resolve(kUrl);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->client_id, kUrl);
  EXPECT_EQ(c->source, "cimd");
  EXPECT_TRUE(c->IsPublic());
  EXPECT_EQ(c->client_name, "Example MCP Client");
  EXPECT_EQ(c->cimd_expires_at, clock_.NowUnix() + 600);
  EXPECT_EQ(http_.last.url, kUrl);
  EXPECT_EQ(http_.last.max_response_bytes, 64u * 1024);
  EXPECT_FALSE(http_.last.allow_private);
  // Cached: no second fetch until max-age passes.
  ASSERT_TRUE(resolver_->Resolve(kUrl));
  EXPECT_EQ(http_.calls, 1);
  clock_.Advance(601);
  ASSERT_TRUE(resolver_->Resolve(kUrl));
  EXPECT_EQ(http_.calls, 2);
}

TEST_F(CimdTest, RefreshPicksUpChangedRedirectUris) {
  ASSERT_TRUE(resolver_->Resolve(kUrl));
  json doc = Document();
  doc["redirect_uris"] = {"http://127.0.0.1:4000/new"};
  Serve(doc);
  clock_.Advance(601);
  auto c = resolver_->Resolve(kUrl);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->redirect_uris, std::vector<std::string>{"http://127.0.0.1:4000/new"});
}

TEST_F(CimdTest, RefusesDocumentWhoseClientIdIsNotItsUrl_Mcp2025_11_25) {
  json doc = Document();
  doc["client_id"] = "https://evil.example.com/client.json";
  Serve(doc);
  auto c = resolver_->Resolve(kUrl);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::kInvalidArgument);
}

TEST_F(CimdTest, RefusesBadRedirectUrisSecretsAndNonJson_CimdDraft_4) {
  json doc = Document();
  doc["redirect_uris"] = {"javascript:alert(1)"};
  Serve(doc);
  EXPECT_FALSE(resolver_->Resolve(kUrl));
  doc = Document();
  doc["client_secret"] = "s3cret";
  Serve(doc);
  EXPECT_FALSE(resolver_->Resolve(kUrl));
  doc = Document();
  doc["token_endpoint_auth_method"] = "client_secret_basic";
  Serve(doc);
  EXPECT_FALSE(resolver_->Resolve(kUrl));
  http_.response.body = "<html>";
  EXPECT_FALSE(resolver_->Resolve(kUrl));
  EXPECT_FALSE(clients_->Find(kUrl).value().has_value());
}

TEST_F(CimdTest, FetchFailuresAreUnavailableAndNotCached) {
  http_.error = Error{Errc::kUnavailable, "timeout", ""};
  auto c = resolver_->Resolve(kUrl);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::kUnavailable);
  http_.error.reset();
  http_.response.status = 404;
  EXPECT_FALSE(resolver_->Resolve(kUrl));
  EXPECT_FALSE(clients_->Find(kUrl).value().has_value());
}

TEST_F(CimdTest, RevokedClientStaysRevokedAcrossRefreshes) {
  ASSERT_TRUE(resolver_->Resolve(kUrl));
  ASSERT_TRUE(clients_->Revoke(kUrl));
  clock_.Advance(601);
  auto c = resolver_->Resolve(kUrl);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::kPermissionDenied);
}

TEST_F(CimdTest, PrivateTargetsOnlyWhenConfigured) {
  CimdResolver allowing(*clients_, http_, clock_, CimdOptions{.allow_private = true});
  ASSERT_TRUE(allowing.Resolve(kUrl));
  EXPECT_TRUE(http_.last.allow_private);
}

}  // namespace
}  // namespace crmd::auth

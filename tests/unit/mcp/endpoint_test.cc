#include "src/mcp/endpoint.h"

#include <gtest/gtest.h>

#include "src/core/json_write.h"
#include "src/core/random.h"
#include "src/mcp/data_block.h"
#include "src/mcp/origin.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/mcp/tool_error.h"

namespace crmd::mcp {
namespace {

using testing::ErrorOf;

using nlohmann::json;

class EndpointTest : public ::testing::Test {
 protected:
  EndpointTest() {
    EXPECT_TRUE(tools_.RegisterDescriptor(
        json{{"name", "whoami"},
             {"description", "Returns the caller."},
             {"scope", "contacts:read"},
             {"inputSchema", {{"type", "object"}, {"additionalProperties", false}}}},
        [](const ToolContext& ctx, const json&) {
          return ToolOutcome::Ok(
              json{{"subject", ctx.principal.subject}, {"session", ctx.session_id}});
        }));
    endpoint_ = std::make_unique<McpEndpoint>(
        McpEndpointOptions{
            .instructions = "Use previews.",
            .resource_metadata_url = "https://crm.test/.well-known/oauth-protected-resource/mcp"},
        tools_, clock_, random_);
    alice_.subject = "alice";
    alice_.client_id = "c1";
    alice_.scopes = {"contacts:read"};
  }

  http::Request Post(const json& body, http::Headers extra = {}) {
    http::Request r;
    r.method = "POST";
    r.path = "/mcp";
    r.body = body.dump();
    r.headers = {{"Content-Type", "application/json"},
                 {"Accept", "application/json, text/event-stream"}};
    for (auto& h : extra) r.headers.push_back(h);
    return r;
  }

  std::string Initialize(const std::string& version = "2025-11-25",
                         const Principal* who = nullptr) {
    auto res = endpoint_->Handle(Post(json{{"jsonrpc", "2.0"},
                                           {"id", 1},
                                           {"method", "initialize"},
                                           {"params",
                                            {{"protocolVersion", version},
                                             {"capabilities", json::object()},
                                             {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}}),
                                 who ? *who : alice_);
    EXPECT_EQ(res.status, 200) << res.body;
    auto sid = res.Header("Mcp-Session-Id");
    return sid ? std::string(*sid) : "";
  }

  http::Response Request(const std::string& sid, const std::string& method,
                         json params = json::object(), const Principal* who = nullptr,
                         http::Headers extra = {}) {
    extra.emplace_back("Mcp-Session-Id", sid);
    return endpoint_->Handle(
        Post(json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", method}, {"params", params}}, extra),
        who ? *who : alice_);
  }

  FakeClock clock_;
  SecureRandom random_;
  ToolRegistry tools_;
  std::unique_ptr<McpEndpoint> endpoint_;
  Principal alice_;
};

TEST(ProtocolVersion,
     NegotiatesClientsVersionWhenSupportedElseLatest_McpLifecycle_VersionNegotiation) {
  EXPECT_EQ(NegotiateProtocolVersion("2025-06-18"), "2025-06-18");
  EXPECT_EQ(NegotiateProtocolVersion("2025-03-26"), "2025-03-26");
  EXPECT_EQ(NegotiateProtocolVersion("2024-11-05"), "2025-11-25");
  EXPECT_EQ(NegotiateProtocolVersion("2099-01-01"), "2025-11-25");
  EXPECT_FALSE(IsSupportedProtocolVersion("2000-01-01"));
}

TEST_F(EndpointTest, InitializeReturnsSessionCapabilitiesAndInstructions) {
  auto res = endpoint_->Handle(Post(json{{"jsonrpc", "2.0"},
                                         {"id", "init"},
                                         {"method", "initialize"},
                                         {"params", {{"protocolVersion", "2025-06-18"}}}}),
                               alice_);
  ASSERT_EQ(res.status, 200);
  json body = json::parse(res.body);
  EXPECT_EQ(body["id"], "init");
  EXPECT_EQ(body["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(body["result"]["capabilities"]["tools"]["listChanged"], false);
  EXPECT_EQ(body["result"]["serverInfo"]["name"], "crmd");
  EXPECT_EQ(body["result"]["instructions"], "Use previews.");
  EXPECT_TRUE(res.Header("Mcp-Session-Id"));
}

TEST_F(EndpointTest, InitializeWithoutProtocolVersionIsInvalidParams) {
  auto res = endpoint_->Handle(Post(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}}),
                               alice_);
  EXPECT_EQ(json::parse(res.body)["error"]["code"], jsonrpc::kInvalidParams);
}

TEST_F(EndpointTest, PingAnswersEmptyResult_McpPing) {
  auto sid = Initialize();
  auto res = Request(sid, "ping");
  ASSERT_EQ(res.status, 200);
  EXPECT_EQ(json::parse(res.body)["result"], json::object());
}

TEST_F(EndpointTest, NotificationsAndResponsesAre202WithEmptyBody_McpTransports_Post4) {
  auto sid = Initialize();
  auto n = endpoint_->Handle(Post(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                                  {{"Mcp-Session-Id", sid}}),
                             alice_);
  EXPECT_EQ(n.status, 202);
  EXPECT_TRUE(n.body.empty());
  auto r = endpoint_->Handle(Post(json{{"jsonrpc", "2.0"}, {"id", 9}, {"result", json::object()}},
                                  {{"Mcp-Session-Id", sid}}),
                             alice_);
  EXPECT_EQ(r.status, 202);
}

TEST_F(EndpointTest, RequestWithoutSessionIs400_McpTransports_SessionManagement2) {
  auto res =
      endpoint_->Handle(Post(json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}), alice_);
  EXPECT_EQ(res.status, 400);
}

TEST_F(EndpointTest, UnknownSessionIs404_McpTransports_SessionManagement3) {
  EXPECT_EQ(Request("no-such-session", "ping").status, 404);
}

TEST_F(EndpointTest, SessionOfAnotherPrincipalIs404) {
  auto sid = Initialize();
  Principal bob = alice_;
  bob.subject = "bob";
  EXPECT_EQ(Request(sid, "ping", json::object(), &bob).status, 404);
  Principal other_client = alice_;
  other_client.client_id = "c2";
  EXPECT_EQ(Request(sid, "ping", json::object(), &other_client).status, 404);
  EXPECT_EQ(Request(sid, "ping").status, 200);
}

TEST_F(EndpointTest, DeleteEndsSession_McpTransports_SessionManagement5) {
  auto sid = Initialize();
  http::Request del;
  del.method = "DELETE";
  del.headers = {{"Mcp-Session-Id", sid}};
  Principal bob = alice_;
  bob.subject = "bob";
  EXPECT_EQ(endpoint_->Handle(del, bob).status, 404);
  EXPECT_EQ(endpoint_->Handle(del, alice_).status, 204);
  EXPECT_EQ(Request(sid, "ping").status, 404);
  EXPECT_EQ(endpoint_->Handle(del, alice_).status, 404);
}

TEST_F(EndpointTest, IdleSessionExpires) {
  auto sid = Initialize();
  clock_.Advance(McpEndpointOptions{}.sessions.idle_ttl_s + 1);
  EXPECT_EQ(Request(sid, "ping").status, 404);
}

TEST_F(EndpointTest, UnsupportedProtocolVersionHeaderIs400_McpTransports_ProtocolVersionHeader) {
  auto sid = Initialize();
  for (const char* v : {"invalid-protocol-version", "2000-01-01", "2099-01-01"}) {
    auto res = Request(sid, "tools/list", json::object(), nullptr, {{"MCP-Protocol-Version", v}});
    EXPECT_EQ(res.status, 400) << v;
  }
  EXPECT_EQ(
      Request(sid, "tools/list", json::object(), nullptr, {{"MCP-Protocol-Version", "2025-06-18"}})
          .status,
      200);
  // Before initialize too, whatever the session state.
  auto res = endpoint_->Handle(Post(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}},
                                    {{"MCP-Protocol-Version", "2099-01-01"}}),
                               alice_);
  EXPECT_EQ(res.status, 400);
}

TEST_F(EndpointTest, UnknownMethodIsMethodNotFound) {
  auto sid = Initialize();
  auto res = Request(sid, "resources/list");
  EXPECT_EQ(json::parse(res.body)["error"]["code"], jsonrpc::kMethodNotFound);
  EXPECT_EQ(json::parse(res.body)["id"], 2);
}

TEST_F(EndpointTest, ParseErrorAndBatchAre400WithJsonRpcError) {
  http::Request r = Post(json::object());
  r.body = "{not json";
  auto res = endpoint_->Handle(r, alice_);
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(json::parse(res.body)["error"]["code"], jsonrpc::kParseError);
  r.body = R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])";
  res = endpoint_->Handle(r, alice_);
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(json::parse(res.body)["error"]["code"], jsonrpc::kInvalidRequest);
}

TEST_F(EndpointTest, ToolCallPassesPrincipalAndSession) {
  auto sid = Initialize();
  auto res = Request(sid, "tools/call", json{{"name", "whoami"}});
  ASSERT_EQ(res.status, 200);
  json body = json::parse(res.body);
  EXPECT_EQ(body["result"]["structuredContent"]["subject"], "alice");
  EXPECT_EQ(body["result"]["structuredContent"]["session"], sid);
}

// A tool result's answer copies its structured content from the text block (ToolCallAnswer):
// the bytes are those of serialising the whole answer, and the two agree, also with
// escapes, non-ASCII text and bytes that are not UTF-8 in what the tool returned.
TEST_F(EndpointTest, ToolResultAnswerIsTheWholeDocumentSerialisedAndItsTwoCopiesAgree) {
  ASSERT_TRUE(tools_.RegisterDescriptor(
      json{{"name", "odd"},
           {"description", "Returns awkward strings."},
           {"scope", "contacts:read"},
           {"inputSchema", {{"type", "object"}, {"additionalProperties", false}}}},
      [](const ToolContext&, const json&) {
        return ToolOutcome::Ok(json{{"quote", "say \"hi\"\\ \n\t\x01"},
                                    {"accents", "Grüße, 東京 😀"},
                                    {"latin1", std::string("caf\xe9")},
                                    {"nested", {{"list", {1, "two", nullptr, 3.5}}}}});
      }));
  auto sid = Initialize();
  auto res = Request(sid, "tools/call", json{{"name", "odd"}});
  ASSERT_EQ(res.status, 200) << res.body;
  json body = json::parse(res.body);
  EXPECT_EQ(res.body, body.dump()) << "not the whole document serialised";
  const json& result = body["result"];
  EXPECT_EQ(result["isError"], false);
  EXPECT_EQ(ParseDataText(result["content"][0]["text"].get<std::string>()).value_or(json()),
            result["structuredContent"]);
  EXPECT_EQ(result["structuredContent"]["quote"], "say \"hi\"\\ \n\t\x01");
  EXPECT_EQ(result["structuredContent"]["accents"], "Grüße, 東京 😀");
  // A byte that is not UTF-8 becomes U+FFFD, as everywhere in crmd's JSON answers.
  EXPECT_EQ(result["structuredContent"]["latin1"], "caf\xef\xbf\xbd");
}

// A result given as text (ToolOutcome::OkText) with the server's registry options: the
// answer is written without a tree, and its bytes are those the tree would give.
TEST_F(EndpointTest, TextResultAnswerIsTheDocumentATreeWouldGiveWithBothCopiesEqual) {
  const json tree{{"quote", "say \"hi\"\\ \n\t\x01"},
                  {"accents", "Grüße, 東京 😀"},
                  {"nested", {{"list", {1, "two", nullptr, 3.5}}, {"zzz", true}}},
                  {"a", -7}};
  ToolRegistry tools(
      ToolRegistryOptions{.validate_output = true, .materialize_text_results = false});
  ASSERT_TRUE(tools.RegisterDescriptor(
      json{{"name", "texter"},
           {"description", "Returns its result as text."},
           {"scope", "contacts:read"},
           {"inputSchema", {{"type", "object"}, {"additionalProperties", false}}},
           {"outputSchema", {{"type", "object"}, {"required", {"quote", "nested"}}}}},
      [&](const ToolContext&, const json&) { return ToolOutcome::OkText(DumpJson(tree)); }));
  // The fixture's requests, to an endpoint over this registry.
  McpEndpoint endpoint(McpEndpointOptions{.resource_metadata_url = "https://crm.test/m"}, tools,
                       clock_, random_);
  auto init = endpoint.Handle(Post(json{{"jsonrpc", "2.0"},
                                        {"id", 1},
                                        {"method", "initialize"},
                                        {"params",
                                         {{"protocolVersion", "2025-11-25"},
                                          {"capabilities", json::object()},
                                          {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}},
                                   {}),
                              alice_);
  auto sid = init.Header("Mcp-Session-Id");
  ASSERT_TRUE(sid.has_value()) << init.body;
  for (const json& id : {json(7), json("req-\"8\"")}) {
    auto res = endpoint.Handle(Post(json{{"jsonrpc", "2.0"},
                                         {"id", id},
                                         {"method", "tools/call"},
                                         {"params", {{"name", "texter"}}}},
                                    {{"Mcp-Session-Id", std::string(*sid)}}),
                               alice_);
    ASSERT_EQ(res.status, 200) << res.body;
    json body = json::parse(res.body);
    EXPECT_EQ(res.body, body.dump()) << "not the bytes of the document";
    EXPECT_EQ(body["id"], id);
    EXPECT_EQ(body["jsonrpc"], "2.0");
    EXPECT_EQ(body.size(), 3u) << res.body;
    EXPECT_EQ(body["result"].size(), 3u) << res.body;  // content, isError, structuredContent
    EXPECT_EQ(body["result"]["isError"], false);
    EXPECT_EQ(body["result"]["structuredContent"], tree);
    EXPECT_EQ(body["result"]["content"][0]["text"], DataText(DumpJson(tree)));
    EXPECT_EQ(body["result"]["content"][0]["type"], "text");
  }
}

TEST_F(EndpointTest, MissingScopeIs403WithStepUpChallenge_McpAuthorization_ScopeChallenge) {
  Principal weak = alice_;
  weak.scopes = {"lists:read"};
  auto sid = Initialize("2025-11-25", &weak);
  auto res = Request(sid, "tools/call", json{{"name", "whoami"}}, &weak);
  EXPECT_EQ(res.status, 403);
  ASSERT_TRUE(res.Header("WWW-Authenticate"));
  EXPECT_EQ(*res.Header("WWW-Authenticate"),
            "Bearer error=\"insufficient_scope\", scope=\"contacts:read\", "
            "resource_metadata=\"https://crm.test/.well-known/oauth-protected-resource/mcp\"");
}

TEST_F(EndpointTest, GetIs405AllowingPostAndDelete_McpTransports_Listening3) {
  http::Request get;
  get.method = "GET";
  get.headers = {{"Accept", "text/event-stream"}};
  auto res = endpoint_->Handle(get, alice_);
  EXPECT_EQ(res.status, 405);
  EXPECT_EQ(*res.Header("Allow"), "POST, DELETE");
}

TEST_F(EndpointTest, AcceptWithoutJsonIs406AndNonJsonContentIs415) {
  http::Request r = Post(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}});
  r.headers = {{"Content-Type", "application/json"}, {"Accept", "text/html"}};
  EXPECT_EQ(endpoint_->Handle(r, alice_).status, 406);
  r.headers = {{"Content-Type", "text/plain"}, {"Accept", "*/*"}};
  EXPECT_EQ(endpoint_->Handle(r, alice_).status, 415);
}

TEST(Origin, RefusesForeignHostAndOrigin_McpTransports_Security) {
  OriginPolicy p = MakeOriginPolicy("https://crm.example.com", {"https://app.example.org"});
  auto req = [](http::Headers h) {
    http::Request r;
    r.headers = std::move(h);
    return r;
  };
  EXPECT_FALSE(CheckOriginAndHost(req({{"Host", "crm.example.com"}}), p));
  EXPECT_FALSE(CheckOriginAndHost(req({{"Host", "CRM.example.com"}}), p));
  EXPECT_FALSE(CheckOriginAndHost(req({{"Host", "localhost:8080"}}), p));
  EXPECT_FALSE(CheckOriginAndHost(req({{"Host", "[::1]:9"}}), p));
  EXPECT_FALSE(CheckOriginAndHost(req({{"Host", "127.0.0.1"}}), p));
  EXPECT_EQ(CheckOriginAndHost(req({{"Host", "evil.example.com"}}), p)->status, 403);
  EXPECT_EQ(CheckOriginAndHost(req({{"Host", "localhost.evil.com"}}), p)->status, 403);
  EXPECT_EQ(CheckOriginAndHost(req({}), p)->status, 403);
  EXPECT_FALSE(CheckOriginAndHost(
      req({{"Host", "crm.example.com"}, {"Origin", "https://crm.example.com"}}), p));
  EXPECT_FALSE(CheckOriginAndHost(
      req({{"Host", "crm.example.com"}, {"Origin", "https://app.example.org"}}), p));
  EXPECT_EQ(CheckOriginAndHost(
                req({{"Host", "crm.example.com"}, {"Origin", "https://evil.example.com"}}), p)
                ->status,
            403);
  EXPECT_EQ(CheckOriginAndHost(req({{"Host", "crm.example.com"}, {"Origin", "null"}}), p)->status,
            403);
}

TEST(Origin, PolicyFromIssuerWithPort) {
  OriginPolicy p = MakeOriginPolicy("http://127.0.0.1:8080", {});
  EXPECT_EQ(p.own_host, "127.0.0.1:8080");
  EXPECT_EQ(p.own_origin, "http://127.0.0.1:8080");
}

}  // namespace
}  // namespace crmd::mcp

namespace crmd::mcp {
namespace {

TEST(RateLimiter, RefusesBeyondBurstAndRefillsOverTime) {
  FakeClock clock;
  RateLimiter limiter(RateLimiterOptions{.per_second = 1, .burst = 3}, clock);
  EXPECT_TRUE(limiter.Allow("a"));
  EXPECT_TRUE(limiter.Allow("a"));
  EXPECT_TRUE(limiter.Allow("a"));
  EXPECT_FALSE(limiter.Allow("a"));
  EXPECT_TRUE(limiter.Allow("b")) << "buckets are per key";
  clock.Advance(2);
  EXPECT_TRUE(limiter.Allow("a"));
  EXPECT_TRUE(limiter.Allow("a"));
  EXPECT_FALSE(limiter.Allow("a"));
}

TEST(RateLimiter, ZeroRateDisablesLimiting) {
  FakeClock clock;
  RateLimiter limiter(RateLimiterOptions{.per_second = 0, .burst = 0}, clock);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.Allow("a"));
}

TEST(EndpointRateLimit, ExcessToolCallsAreRateLimitedToolErrors) {
  FakeClock clock;
  SecureRandom random;
  ToolRegistry tools;
  ASSERT_TRUE(tools.RegisterDescriptor(
      json{{"name", "t"}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}},
      [](const ToolContext&, const json&) { return ToolOutcome::Ok(json::object()); }));
  McpEndpoint endpoint(McpEndpointOptions{.rate_limit = {.per_second = 1, .burst = 2}}, tools,
                       clock, random);
  Principal p;
  p.subject = "s";
  p.client_id = "c";
  http::Request r;
  r.method = "POST";
  r.headers = {{"Content-Type", "application/json"}};
  r.body =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})";
  auto init = endpoint.Handle(r, p);
  r.headers.emplace_back("Mcp-Session-Id", std::string(*init.Header("Mcp-Session-Id")));
  r.body = R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}})";
  EXPECT_EQ(json::parse(endpoint.Handle(r, p).body)["result"]["isError"], false);
  EXPECT_EQ(json::parse(endpoint.Handle(r, p).body)["result"]["isError"], false);
  json limited = json::parse(endpoint.Handle(r, p).body);
  EXPECT_EQ(limited["result"]["isError"], true);
  EXPECT_EQ(ErrorOf(limited["result"])["code"], "rate_limited");
}

}  // namespace
}  // namespace crmd::mcp

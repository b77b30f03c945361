// MCP 2026-07-28 through real HTTP with real access tokens, beside the session-based
// revisions on the same /mcp: stateless requests, request metadata headers,
// server/discover, caching hints, and multi round-trip tools/call (test-only tool
// test_elicit_confirm). McpClient checks every reply against
// tests/data/mcp/2026-07-28.schema.json (and each request it sends).
#include <gtest/gtest.h>

#include "src/app/app.h"
#include "src/app/services.h"
#include "tests/support/mcp_client.h"
#include "tests/support/mcp_input_tool.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

const json kFormOnly{{"elicitation", json::object()}};
const json kUrlToo{{"elicitation", {{"form", json::object()}, {"url", json::object()}}}};

class McpModernTest : public ::testing::Test {
 protected:
  McpModernTest()
      : server_(TestServerOptions{
            .before_start =
                [](app::App::Services& s) { EXPECT_TRUE(RegisterInputTestTool(*s.tools)); },
        }) {}

  McpClient Modern(json capabilities = kFormOnly,
                   std::vector<std::string> scopes = {"contacts:read"},
                   const std::string& subject = "1") {
    McpClient c(server_,
                McpClientOptions{.token = MintTestToken(
                                     server_, {.scopes = std::move(scopes), .subject = subject})});
    c.UseModern({.capabilities = std::move(capabilities)});
    return c;
  }

  TestServer server_;
};

TEST_F(McpModernTest, DiscoverWithoutHandshake_Server_Discover) {
  auto c = Modern();
  auto r = c.Discover();
  ASSERT_TRUE(r.ok()) << r.raw;
  EXPECT_EQ(r.result()["supportedVersions"],
            (json{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}));
  EXPECT_EQ(r.result()["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "crmd");
  EXPECT_NE(r.result()["instructions"].get<std::string>().find("confirm_action"),
            std::string::npos);
  EXPECT_FALSE(r.Header("Mcp-Session-Id"));
}

TEST_F(McpModernTest,
       ToolsListPagesCarryCachingHintsAndAStableOrder_Caching_And_Tools_ListingTools) {
  auto c = Modern();
  std::vector<std::string> names, again;
  std::optional<std::string> cursor;
  for (int pass = 0; pass < 2; ++pass) {
    auto& out = pass == 0 ? names : again;
    cursor.reset();
    do {
      auto r = c.ListTools(cursor);
      ASSERT_TRUE(r.ok()) << r.raw;
      EXPECT_EQ(r.result()["cacheScope"], "public");
      EXPECT_GT(r.result()["ttlMs"].get<int64_t>(), 0);
      for (const auto& t : r.result()["tools"]) out.push_back(t["name"]);
      cursor = r.result().contains("nextCursor")
                   ? std::optional<std::string>(r.result()["nextCursor"])
                   : std::nullopt;
    } while (cursor);
  }
  EXPECT_EQ(names, again);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.size(), 49u);  // 48 tools + the test tool
}

TEST_F(McpModernTest, RealToolAnswersWithResultTypeAndServerInfo_Basic_ResultType) {
  auto c = Modern();
  c.ListTools();  // output schemas, so structuredContent is checked too
  auto r = c.CallTool("list_contacts", json::object());
  ASSERT_TRUE(r.ok()) << r.raw;
  EXPECT_FALSE(r.is_tool_error()) << r.raw;
  EXPECT_EQ(r.result()["resultType"], "complete");
}

TEST_F(McpModernTest, MissingScopeIs403StepUpAsBefore_Authorization_ScopeChallenge) {
  auto c = Modern();
  auto r = c.CallTool("delete_contacts", {{"ids", {1}}});
  EXPECT_EQ(r.status, 403) << r.raw;
  EXPECT_NE(std::string(r.Header("WWW-Authenticate").value_or("")).find("contacts:delete"),
            std::string::npos);
}

TEST_F(McpModernTest, UnsupportedVersionListsSupportedOnes_Versioning_ProtocolVersionNegotiation) {
  McpClient c(server_, McpClientOptions{.token = MintTestToken(server_)});
  c.UseModern({.version = "2099-01-01"});
  auto r = c.Discover();
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error()["code"], -32022);
  EXPECT_EQ(r.error()["data"]["supported"][0], "2026-07-28");
  EXPECT_EQ(r.error()["data"]["requested"], "2099-01-01");
}

TEST_F(McpModernTest, HeadersMustMatchTheBody_StreamableHttp_ServerValidation) {
  auto c = Modern();
  json call{{"name", "list_contacts"}, {"arguments", json::object()}};
  auto r = c.ModernRequest("tools/call", call, {{"Mcp-Name", "get_contact"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error()["code"], -32020);
  r = c.ModernRequest("tools/call", call, {{"Mcp-Method", "tools/list"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error()["code"], -32020);
  r = c.ModernRequest("tools/call", call, {{"MCP-Protocol-Version", "2025-11-25"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error()["code"], -32020);
  // Non-ASCII names travel base64-encoded; an encoded plain name is accepted too.
  r = c.ModernRequest("tools/call", call, {{"Mcp-Name", "=?base64?bGlzdF9jb250YWN0cw==?="}});
  EXPECT_EQ(r.status, 200) << r.raw;
}

TEST_F(McpModernTest, MissingRequiredMetaIsInvalidParams400_Basic_PerRequestProtocolFields) {
  auto c = Modern();
  auto r = c.ModernRequest("tools/list",
                           {{"_meta", {{"io.modelcontextprotocol/clientCapabilities", nullptr}}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error()["code"], -32602);
  // A request that names the revision only in its header, with no _meta at all, is told
  // what the revision needs and how to use an earlier one instead.
  auto bare = c.RawPost(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}})",
                        {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/list"}});
  EXPECT_EQ(bare.status, 400) << bare.raw;
  EXPECT_EQ(bare.error()["code"], -32602) << bare.raw;
  EXPECT_EQ(bare.body["id"], 3) << bare.raw;
  const std::string message = bare.error().value("message", "");
  EXPECT_NE(message.find("_meta.io.modelcontextprotocol/protocolVersion"), std::string::npos)
      << message;
  EXPECT_NE(message.find("initialize"), std::string::npos) << message;
}

TEST_F(McpModernTest, PingIsGoneIn2026_StreamableHttp_ProtocolVersionHeader) {
  auto c = Modern();
  auto r = c.ModernRequest("ping", json::object());
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.error()["code"], -32601);
}

TEST_F(McpModernTest, InitializeWithRequestMetadataIsARemovedMethod_StreamableHttp_MethodNotFound) {
  // An initialize carrying 2026-07-28 _meta is a stateless request: 404 and -32601, no
  // session. A session client's initialize (no _meta version) still starts a session.
  auto c = Modern();
  auto r = c.ModernRequest("initialize", json::object());
  EXPECT_EQ(r.status, 404) << r.raw;
  EXPECT_EQ(r.error()["code"], -32601);
  EXPECT_FALSE(r.Header("Mcp-Session-Id"));
  McpClient legacy(server_, McpClientOptions{.token = MintTestToken(server_)});
  EXPECT_TRUE(legacy.Initialize().ok());
}

TEST_F(McpModernTest, AVersionHeaderThatDiffersFromTheBodyIsAMismatchEvenForAnUnknownBody) {
  // The header and _meta must match whatever they name: a mismatch is -32020 before the
  // body's (unsupported) version is judged; header and body agreeing on it is -32022.
  McpClient c(server_, McpClientOptions{.token = MintTestToken(server_)});
  c.UseModern({.version = "v999.0.0"});
  auto mismatch =
      c.ModernRequest("server/discover", json::object(), {{"MCP-Protocol-Version", "2026-07-28"}});
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_EQ(mismatch.error()["code"], -32020) << mismatch.raw;
  auto unknown = c.ModernRequest("server/discover", json::object());
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(unknown.error()["code"], -32022) << unknown.raw;
}

TEST_F(McpModernTest, A2026HeaderOverA2025BodyIsHeaderMismatch_StreamableHttp_ServerValidation) {
  // The reverse of the case above: the header asks for 2026-07-28 while _meta names
  // 2025-11-25. Still -32020 (HTTP 400), with the request's id and both values named.
  McpClient c(server_, McpClientOptions{.token = MintTestToken(server_)});
  c.UseModern({.version = "2025-11-25"});
  for (const char* method : {"tools/list", "server/discover"}) {
    auto r = c.ModernRequest(method, json::object(), {{"MCP-Protocol-Version", "2026-07-28"}});
    EXPECT_EQ(r.status, 400) << r.raw;
    EXPECT_EQ(r.error()["code"], -32020) << r.raw;
    EXPECT_TRUE(r.body.contains("id")) << r.raw;
    const std::string message = r.error().value("message", "");
    EXPECT_EQ(message.rfind("Header mismatch: ", 0), 0u) << message;
    EXPECT_NE(message.find("'2026-07-28'"), std::string::npos) << message;
    EXPECT_NE(message.find("'2025-11-25'"), std::string::npos) << message;
  }
  json call{{"name", "list_contacts"}, {"arguments", json::object()}};
  auto r = c.ModernRequest("tools/call", call, {{"MCP-Protocol-Version", "2026-07-28"}});
  EXPECT_EQ(r.status, 400) << r.raw;
  EXPECT_EQ(r.error()["code"], -32020) << r.raw;
}

TEST_F(McpModernTest, InputResponsesWithoutRequestStateAreIgnored_Mrtr_IgnoreUnrecognised) {
  auto c = Modern();
  json args{{"item", "4 tags"}};
  auto r = c.ModernRequest(
      "tools/call", {{"name", kInputTestTool},
                     {"arguments", args},
                     {"inputResponses",
                      {{"confirm", {{"action", "accept"}, {"content", {{"answer", "4 tags"}}}}}}}});
  ASSERT_TRUE(r.ok()) << r.raw;
  // A first round: crmd asks (it does not take answers to a question it never asked).
  EXPECT_EQ(r.result()["resultType"], "input_required") << r.raw;
  EXPECT_TRUE(r.result().contains("requestState"));
}

TEST_F(McpModernTest, ElicitationRoundTripCompletesOnRetry_Mrtr_BasicWorkflow) {
  auto c = Modern();
  c.ListTools();
  json args{{"item", "3 contacts"}};
  auto first = c.CallTool(kInputTestTool, args);
  ASSERT_TRUE(first.ok()) << first.raw;
  ASSERT_EQ(first.result()["resultType"], "input_required") << first.raw;
  const json& ask = first.result()["inputRequests"]["confirm"];
  EXPECT_EQ(ask["method"], "elicitation/create");
  EXPECT_EQ(ask["params"]["mode"], "form");
  std::string state = first.result()["requestState"];

  auto done = c.CallToolRetry(
      kInputTestTool, args,
      {{"confirm", {{"action", "accept"}, {"content", {{"answer", "3 contacts"}}}}}}, state);
  ASSERT_TRUE(done.ok()) << done.raw;
  EXPECT_EQ(done.result()["resultType"], "complete");
  EXPECT_EQ(done.structured(), (json{{"confirmed", true}, {"item", "3 contacts"}, {"rounds", 1}}));
}

TEST_F(McpModernTest, AnotherNodeOnTheSameDatabaseFinishesTheRoundTrip_Mrtr_ServerRequirements) {
  // A second crmd on the same database with the same public URL: a node behind the same
  // load balancer. The requestState key lives in the database, so it seals and opens alike.
  TestServer other(TestServerOptions{
      .configure =
          [&](Config& c) {
            c.database_url = server_.database_url();
            c.public_base_url = server_.base_url();
          },
      .before_start = [](app::App::Services& s) { EXPECT_TRUE(RegisterInputTestTool(*s.tools)); },
  });
  auto c = Modern();
  json args{{"item", "2 lists"}};
  auto first = c.CallTool(kInputTestTool, args);
  ASSERT_EQ(first.result()["resultType"], "input_required") << first.raw;
  std::string state = first.result()["requestState"];

  McpClient on_other(
      other, McpClientOptions{
                 .token = MintTestToken(server_, {.scopes = {"contacts:read"}, .subject = "1"})});
  on_other.UseModern({.capabilities = kFormOnly});
  auto done = on_other.CallToolRetry(
      kInputTestTool, args,
      {{"confirm", {{"action", "accept"}, {"content", {{"answer", "2 lists"}}}}}}, state);
  ASSERT_TRUE(done.ok()) << done.raw;
  EXPECT_EQ(done.result()["resultType"], "complete") << done.raw;
  EXPECT_EQ(done.structured()["confirmed"], true);
}

TEST_F(McpModernTest, UrlElicitationForAClientThatDeclaresIt_Elicitation_UrlMode) {
  auto c = Modern(kUrlToo);
  json args{{"item", "campaign 7"}, {"mode", "url"}};
  auto first = c.CallTool(kInputTestTool, args);
  ASSERT_EQ(first.result()["resultType"], "input_required") << first.raw;
  EXPECT_EQ(first.result()["inputRequests"]["confirm"]["params"]["url"], kInputTestUrl);
  auto done = c.CallToolRetry(kInputTestTool, args, {{"confirm", {{"action", "accept"}}}},
                              first.result()["requestState"]);
  EXPECT_EQ(done.structured()["confirmed"], true) << done.raw;

  // A client that declares form only is told what is missing, not sent a URL.
  auto form_only = Modern(kFormOnly);
  auto r = form_only.CallTool(kInputTestTool, args);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error()["code"], -32021);
}

TEST_F(McpModernTest, StateIsBoundToTheSubjectAndArguments_Mrtr_ServerRequirements5) {
  auto alice = Modern(kFormOnly, {"contacts:read"}, "1");
  auto bob = Modern(kFormOnly, {"contacts:read"}, "2");
  json args{{"item", "x"}};
  std::string state = alice.CallTool(kInputTestTool, args).result()["requestState"];
  json answer{{"confirm", {{"action", "accept"}, {"content", {{"answer", "x"}}}}}};
  auto stolen = bob.CallToolRetry(kInputTestTool, args, answer, state);
  EXPECT_EQ(stolen.error()["code"], -32602) << stolen.raw;
  auto other = alice.CallToolRetry(kInputTestTool, {{"item", "y"}}, answer, state);
  EXPECT_EQ(other.error()["code"], -32602) << other.raw;
  auto own = alice.CallToolRetry(kInputTestTool, args, answer, state);
  EXPECT_EQ(own.structured()["confirmed"], true) << own.raw;
}

TEST(McpModernCors,
     PreflightAllowsTheRequestMetadataHeaders_StreamableHttp_StandardRequestHeaders) {
  TestServer server(TestServerOptions{
      .configure = [](Config& c) { c.allowed_origins = {"https://app.example.org"}; }});
  auto pre = server.Send(
      "OPTIONS", "/mcp", "",
      {{"Origin", "https://app.example.org"},
       {"Access-Control-Request-Method", "POST"},
       {"Access-Control-Request-Headers", "mcp-method, mcp-name, mcp-protocol-version"}});
  EXPECT_EQ(pre.status, 204);
  std::string allowed(pre.Header("Access-Control-Allow-Headers").value_or(""));
  for (const char* h : {"Mcp-Method", "Mcp-Name", "MCP-Protocol-Version"}) {
    EXPECT_NE(allowed.find(h), std::string::npos) << h;
  }
}

TEST_F(McpModernTest, SessionClientsKeepWorkingBesideModernOnes_Versioning_CompatibilityMatrix) {
  McpClient legacy(server_, McpClientOptions{.token = MintTestToken(server_)});
  auto init = legacy.Initialize("2026-07-28");  // initialize negotiates a session-based revision
  ASSERT_TRUE(init.ok()) << init.raw;
  EXPECT_EQ(init.result()["protocolVersion"], "2025-11-25");
  auto modern = Modern();
  EXPECT_TRUE(modern.Discover().ok());
  EXPECT_TRUE(legacy.Ping().ok());
  auto list = legacy.ListTools();
  ASSERT_TRUE(list.ok()) << list.raw;
  EXPECT_FALSE(list.result().contains("resultType"));
  // The test tool needs 2026-07-28: a session client gets a tool error.
  EXPECT_EQ(legacy.CallToolError(kInputTestTool, {{"item", "x"}})["code"], "invalid_transition");
  EXPECT_EQ(legacy.EndSession().status, 204);
}

}  // namespace
}  // namespace crmd::testing

// The /mcp endpoint through real HTTP with real access tokens (MintTestToken): transport,
// lifecycle, sessions, authentication challenges and tools/call on test-only tools.
#include <gtest/gtest.h>

#include "src/app/app.h"
#include "src/app/services.h"
#include "tests/support/mcp_client.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

json TestToolDescriptor() {
  return json{
      {"name", "test_create_contact"},
      {"title", "Create a test contact"},
      {"description", "Test-only tool: echoes the contact it would create."},
      {"scope", "contacts:write"},
      {"annotations", {{"readOnlyHint", false}, {"destructiveHint", false}}},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"email", {{"type", "string"}, {"pattern", "^[^@\\s]+@[^@\\s]+$"}}},
          {"name", {{"type", "string"}, {"maxLength", 100}}}}},
        {"required", {"email"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties", {{"id", {{"type", "integer"}}}, {"email", {{"type", "string"}}}}},
        {"required", {"id", "email"}}}},
  };
}

class McpHttpTest : public ::testing::Test {
 protected:
  McpHttpTest()
      : server_(TestServerOptions{
            .configure = [](Config& c) { c.allowed_origins = {"https://app.example.org"}; },
            .before_start =
                [](app::App::Services& s) {
                  EXPECT_TRUE(s.tools->RegisterDescriptor(
                      TestToolDescriptor(), [](const mcp::ToolContext& ctx, const json& args) {
                        if (args["email"] == "taken@example.com") {
                          return mcp::ToolOutcome::Fail(
                              {Errc::kAlreadyExists, "email already used", ""});
                        }
                        return mcp::ToolOutcome::Ok(json{{"id", 1}, {"email", args["email"]}});
                      }));
                  EXPECT_TRUE(s.tools->RegisterDescriptor(
                      json{{"name", "test_confirm"},
                           {"description", "Test-only: needs a scope decided at run time."},
                           {"inputSchema", {{"type", "object"}}}},
                      [](const mcp::ToolContext&, const json&) {
                        return mcp::ToolOutcome::Fail(
                            {Errc::kPermissionDenied, "needs contacts:delete", ""},
                            json{{"required_scope", "contacts:delete"}});
                      }));
                },
        }) {}

  // A client with a real token for `subject` holding `scopes`.
  McpClient Client(std::vector<std::string> scopes = {"contacts:read", "contacts:write"},
                   const std::string& subject = "1") {
    return WithToken(
        MintTestToken(server_, TestTokenOptions{.scopes = std::move(scopes), .subject = subject}));
  }
  McpClient WithToken(const std::string& token) {
    return McpClient(server_, McpClientOptions{.token = token});
  }
  std::string ResourceMetadata() {
    return server_.base_url() + "/.well-known/oauth-protected-resource/mcp";
  }

  TestServer server_;
};

TEST_F(McpHttpTest, InitializeNegotiatesAndIssuesSession_McpLifecycle_Initialization) {
  auto c = Client();
  auto r = c.Initialize("2025-06-18");
  ASSERT_TRUE(r.ok()) << r.raw;
  EXPECT_EQ(r.result()["protocolVersion"], "2025-06-18");
  EXPECT_EQ(r.result()["serverInfo"]["name"], "crmd");
  EXPECT_NE(r.result()["instructions"].get<std::string>().find("confirm_action"),
            std::string::npos);
  EXPECT_FALSE(c.session_id().empty());

  auto c2 = Client();
  EXPECT_EQ(c2.Initialize("1999-01-01").result()["protocolVersion"], "2025-11-25");
}

TEST_F(McpHttpTest, PingAndToolsList) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto p = c.Ping();
  EXPECT_TRUE(p.ok());
  json tools = c.ListAllTools();
  bool found = false;
  for (const auto& t : tools) found |= t["name"] == "test_create_contact";
  EXPECT_TRUE(found) << tools.dump();
}

TEST_F(McpHttpTest, ToolCallReturnsStructuredContent) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  c.ListTools();  // lets the client check structuredContent against the outputSchema
  auto r = c.CallTool("test_create_contact", {{"email", "a@example.com"}});
  ASSERT_TRUE(r.ok()) << r.raw;
  EXPECT_FALSE(r.is_tool_error());
  EXPECT_EQ(r.structured()["email"], "a@example.com");
}

TEST_F(McpHttpTest, BusinessFailureIsToolErrorWithCode) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto r = c.CallTool("test_create_contact", {{"email", "taken@example.com"}});
  ASSERT_TRUE(r.is_tool_error()) << r.raw;
  EXPECT_EQ(r.structured()["error"]["code"], "already_exists");
  EXPECT_EQ(c.CallToolError("test_create_contact", {{"email", "taken@example.com"}})["code"],
            "already_exists");
  EXPECT_EQ(c.CallToolOk("test_create_contact", {{"email", "b@example.com"}})["email"],
            "b@example.com");
}

TEST_F(McpHttpTest, SchemaViolationIsToolErrorNamingField_McpTools_ErrorHandling) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto r = c.CallTool("test_create_contact", {{"email", "not-an-email"}});
  ASSERT_TRUE(r.is_tool_error()) << r.raw;
  EXPECT_EQ(r.structured()["error"]["code"], "validation_failed");
  EXPECT_EQ(r.structured()["error"]["field"], "email");
  EXPECT_NE(r.result()["content"][0]["text"].get<std::string>().find("/email"), std::string::npos);
}

TEST_F(McpHttpTest, UnknownToolIsJsonRpcError_McpTools_ErrorHandling) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto r = c.CallTool("no_such_tool", json::object());
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.error()["code"], -32602);
}

TEST_F(McpHttpTest, UnknownMethodIsMethodNotFound) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto r = c.Request("prompts/list");
  EXPECT_EQ(r.error()["code"], -32601);
}

TEST_F(McpHttpTest, MalformedJsonIsParseError) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto r = c.RawPost("{\"jsonrpc\":\"2.0\",");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"]["code"], -32700);
  EXPECT_FALSE(r.body.contains("id"));
  EXPECT_FALSE(ValidateMcpType("JSONRPCErrorResponse", r.body));
}

TEST_F(McpHttpTest, BatchIsInvalidRequest_McpTransports_Post3) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto r = c.RawPost(
      R"([{"jsonrpc":"2.0","id":901,"method":"ping"},{"jsonrpc":"2.0","id":902,"method":"ping"}])");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"]["code"], -32600);
}

TEST_F(McpHttpTest, MissingScopeIs403WithStepUpChallenge_McpAuthorization_ScopeChallenge) {
  auto c = Client({"contacts:read"});
  ASSERT_TRUE(c.Initialize().ok());
  auto r = c.CallTool("test_create_contact", {{"email", "a@example.com"}});
  EXPECT_EQ(r.status, 403);
  ASSERT_TRUE(r.Header("WWW-Authenticate"));
  EXPECT_EQ(std::string(*r.Header("WWW-Authenticate")),
            "Bearer error=\"insufficient_scope\", scope=\"contacts:write\", resource_metadata=\"" +
                ResourceMetadata() + "\"");
}

TEST_F(McpHttpTest, HandlerCanDemandAScopeAtRunTime) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto r = c.CallTool("test_confirm", json::object());
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(std::string(*r.Header("WWW-Authenticate")).find("scope=\"contacts:delete\""),
            std::string::npos);
}

TEST_F(McpHttpTest, NoTokenIs401WithResourceMetadata_Rfc9728_5_1) {
  auto c = WithToken("");
  auto r = c.RawPost(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
  EXPECT_EQ(r.status, 401);
  ASSERT_TRUE(r.Header("WWW-Authenticate"));
  std::string h(*r.Header("WWW-Authenticate"));
  EXPECT_EQ(h.rfind("Bearer resource_metadata=\"" + ResourceMetadata() + "\"", 0), 0u) << h;
  EXPECT_NE(h.find("scope=\"contacts:read"), std::string::npos) << h;
  EXPECT_EQ(h.find("error="), std::string::npos) << "no error code without a token (RFC 6750 §3.1)";
}

TEST_F(McpHttpTest, BadTokenIs401InvalidToken_Rfc6750_3_1) {
  auto c = WithToken("garbage");
  auto r = c.RawPost(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  EXPECT_EQ(r.status, 401);
  EXPECT_NE(std::string(*r.Header("WWW-Authenticate")).find("error=\"invalid_token\""),
            std::string::npos);
}

TEST_F(McpHttpTest, TokenInQueryStringIsRefused_Rfc6750_3_1) {
  std::string token = MintTestToken(server_);
  auto r = server_.Send(
      "POST", "/mcp?access_token=" + token,
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})",
      {{"Content-Type", "application/json"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(std::string(*r.Header("WWW-Authenticate")).find("error=\"invalid_request\""),
            std::string::npos);
}

TEST_F(McpHttpTest, ExpiredTokenIs401InvalidToken) {
  auto c = WithToken(MintTestToken(server_, TestTokenOptions{.ttl_seconds = -10}));
  auto r = c.RawPost(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
  EXPECT_EQ(r.status, 401);
  EXPECT_NE(std::string(*r.Header("WWW-Authenticate")).find("error=\"invalid_token\""),
            std::string::npos);
}

TEST_F(McpHttpTest, TokenForAnotherResourceIs401_Rfc8707) {
  auto c = WithToken(
      MintTestToken(server_, TestTokenOptions{.audience = "https://other.example.com/mcp"}));
  auto r = c.RawPost(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
  EXPECT_EQ(r.status, 401);
}

TEST_F(McpHttpTest, ForeignOriginIs403_McpTransports_Security) {
  auto c = Client();
  auto r = c.RawPost(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})",
      {{"Origin", "https://evil.example.com"}});
  EXPECT_EQ(r.status, 403);
  auto ok = c.RawPost(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})",
      {{"Origin", "https://app.example.org"}});
  EXPECT_EQ(ok.status, 200) << ok.raw;
}

TEST_F(McpHttpTest, ForeignHostIsRefusedEvenWithoutToken_DnsRebinding) {
  auto c = WithToken("");
  auto r = c.RawPost(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}})",
      {{"Host", "evil.example.com"}});
  // The listener's allowed_hosts refuses it before /mcp's own guard (403) would
  // (docs/http.md; the guard alone: tests/integration/http/hosts_test.cc).
  EXPECT_EQ(r.status, 421);
  auto local = c.RawPost(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}})",
      {{"Host", "localhost:1234"}});
  EXPECT_EQ(local.status, 401);
}

TEST_F(McpHttpTest, UnsupportedProtocolVersionHeaderIs400) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  c.set_protocol_version("2099-01-01");
  auto r = c.RawPost(R"({"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}})");
  EXPECT_EQ(r.status, 400);
}

TEST_F(McpHttpTest, SessionIsBoundToPrincipal) {
  auto alice = Client();
  ASSERT_TRUE(alice.Initialize().ok());
  auto bob = Client({"contacts:read", "contacts:write"}, "2");
  bob.set_session_id(alice.session_id());
  bob.set_protocol_version("2025-11-25");
  auto r = bob.RawPost(R"({"jsonrpc":"2.0","id":5,"method":"ping"})");
  EXPECT_EQ(r.status, 404);
  EXPECT_TRUE(alice.Ping().ok());
}

TEST_F(McpHttpTest, DeletedSessionIs404_McpTransports_SessionManagement) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto d = c.EndSession();
  EXPECT_TRUE(d.status >= 200 && d.status < 300) << d.status;
  auto r = c.RawPost(R"({"jsonrpc":"2.0","id":5,"method":"ping"})");
  EXPECT_EQ(r.status, 404);
}

TEST_F(McpHttpTest, RequestWithoutSessionIs400) {
  auto c = Client();
  auto r = c.RawPost(R"({"jsonrpc":"2.0","id":5,"method":"tools/list"})");
  EXPECT_EQ(r.status, 400);
}

// JSON-RPC 2.0 §5, MCP basic/index "Error Responses": an error answers with the id of the
// request whenever it could be read, also the transport's own errors (session, version,
// content negotiation, authentication). Only an unreadable id is left out (MCP's schemas
// from 2025-11-25 on make it optional; a RequestId is never null).
TEST_F(McpHttpTest, TransportErrorsCarryTheRequestsId_JsonRpc2_5) {
  const std::string ping = R"({"jsonrpc":"2.0","id":9,"method":"ping"})";
  auto expect_id = [](const McpReply& r, int status, const json& id, const char* what) {
    EXPECT_EQ(r.status, status) << what << ": " << r.raw;
    ASSERT_TRUE(r.body.is_object()) << what << ": " << r.raw;
    ASSERT_TRUE(r.body.contains("error")) << what << ": " << r.raw;
    EXPECT_EQ(r.body.value("id", json()), id) << what << ": " << r.raw;
    EXPECT_FALSE(ValidateMcpType("JSONRPCErrorResponse", r.body)) << what << ": " << r.raw;
  };

  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  const std::string session = c.session_id();
  c.set_session_id("no-such-session-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  expect_id(c.RawPost(ping), 404, 9, "unknown session");
  expect_id(c.RawPost(R"({"jsonrpc":"2.0","id":"abc","method":"tools/list"})"), 404, "abc",
            "unknown session, string id");
  c.set_session_id(session);
  expect_id(c.RawPost(ping, {{"MCP-Protocol-Version", "2099-01-01"}}), 400, 9,
            "unsupported protocol version");
  expect_id(c.RawPost(ping, {{"Accept", "text/html"}}), 406, 9, "Accept without JSON");
  expect_id(c.RawPost(ping, {{"Content-Type", "text/plain"}}), 415, 9, "not application/json");

  auto fresh = Client();
  expect_id(fresh.RawPost(ping), 400, 9, "no Mcp-Session-Id");

  // A notification has no id to answer with; neither has a body that is not a request.
  c.set_session_id("no-such-session-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  auto note = c.RawPost(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(note.status, 404);
  EXPECT_FALSE(note.body.contains("id")) << note.raw;
  auto not_json = c.RawPost("{\"id\":9,", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(not_json.status, 415);
  EXPECT_FALSE(not_json.body.contains("id")) << not_json.raw;
}

TEST_F(McpHttpTest, UnauthorizedAnswersKeepTheChallengeAndCarryTheRequestsId_Rfc9728_5_1) {
  auto none = WithToken("");
  auto r = none.RawPost(R"({"jsonrpc":"2.0","id":9,"method":"ping"})");
  EXPECT_EQ(r.status, 401);
  ASSERT_TRUE(r.Header("WWW-Authenticate"));
  EXPECT_EQ(std::string(*r.Header("WWW-Authenticate"))
                .rfind("Bearer resource_metadata=\"" + ResourceMetadata() + "\"", 0),
            0u);
  EXPECT_EQ(r.body.value("id", json()), 9) << r.raw;
  EXPECT_EQ(r.body["error"]["code"], -32000) << r.raw;
  EXPECT_FALSE(ValidateMcpType("JSONRPCErrorResponse", r.body)) << r.raw;

  auto bad = WithToken("garbage");
  auto invalid = bad.RawPost(R"({"jsonrpc":"2.0","id":"x-1","method":"tools/list"})");
  EXPECT_EQ(invalid.status, 401);
  EXPECT_NE(std::string(invalid.Header("WWW-Authenticate").value_or("")).find("invalid_token"),
            std::string::npos);
  EXPECT_EQ(invalid.body.value("id", json()), "x-1") << invalid.raw;

  // Not a request: no id, the same challenge.
  auto garbage = none.RawPost("not json");
  EXPECT_EQ(garbage.status, 401);
  EXPECT_TRUE(garbage.Header("WWW-Authenticate"));
  EXPECT_FALSE(garbage.body.contains("id")) << garbage.raw;

  // A large body is not parsed for a client without credentials: the same 401, no id.
  std::string padding(20 * 1024, ' ');
  auto large = none.RawPost(R"({"jsonrpc":"2.0","id":10,"method":"ping")" + padding + "}");
  EXPECT_EQ(large.status, 401);
  EXPECT_TRUE(large.Header("WWW-Authenticate"));
  EXPECT_EQ(large.body["error"]["code"], -32000) << large.raw;
  EXPECT_FALSE(large.body.contains("id")) << large.raw;
}

TEST_F(McpHttpTest, GetIs405_McpTransports_Listening) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto r = c.RawSend("GET", "", {{"Accept", "text/event-stream"}});
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(std::string(*r.Header("Allow")), "POST, DELETE");
}

TEST_F(McpHttpTest, NotificationIs202WithoutBody) {
  auto c = Client();
  ASSERT_TRUE(c.Initialize().ok());
  auto r = c.Notify("notifications/cancelled", {{"requestId", 1}});
  EXPECT_EQ(r.status, 202);
  EXPECT_TRUE(r.raw.empty());
}

}  // namespace
}  // namespace crmd::testing

namespace crmd::testing {
namespace {

// The client's checks are only worth something if they can fail.
TEST(McpSchemaValidation, RejectsMalformedServerMessages) {
  using nlohmann::json;
  EXPECT_TRUE(ValidateMcpType("CallToolResult", json{{"content", 5}}));
  EXPECT_TRUE(ValidateMcpType("CallToolResult", json{{"content", {{{"type", "text"}}}}}));
  EXPECT_FALSE(
      ValidateMcpType("CallToolResult", json{{"content", {{{"type", "text"}, {"text", "x"}}}}}));
  EXPECT_TRUE(ValidateMcpType("InitializeResult", json{{"protocolVersion", "2025-11-25"}}));
  EXPECT_TRUE(ValidateMcpType(
      "JSONRPCErrorResponse",
      json{{"jsonrpc", "2.0"}, {"id", 1}, {"error", {{"code", "x"}, {"message", "m"}}}}));
  EXPECT_TRUE(ValidateMcpType("ListToolsResult", json{{"tools", {{{"name", "x"}}}}}))
      << "a Tool needs an inputSchema";
}

}  // namespace
}  // namespace crmd::testing

namespace crmd::testing {
namespace {

TEST(McpCors, PreflightAndResponsesNameTheAllowedOrigin) {
  TestServer server(TestServerOptions{
      .configure = [](Config& c) { c.allowed_origins = {"https://app.example.org"}; }});
  auto pre = server.Send(
      "OPTIONS", "/mcp", "",
      {{"Origin", "https://app.example.org"},
       {"Access-Control-Request-Method", "POST"},
       {"Access-Control-Request-Headers", "authorization, content-type, mcp-session-id"}});
  EXPECT_EQ(pre.status, 204);
  EXPECT_EQ(std::string(*pre.Header("Access-Control-Allow-Origin")), "https://app.example.org");
  EXPECT_NE(std::string(*pre.Header("Access-Control-Allow-Headers")).find("Mcp-Session-Id"),
            std::string::npos);

  auto evil = server.Send("OPTIONS", "/mcp", "", {{"Origin", "https://evil.example.com"}});
  EXPECT_EQ(evil.status, 403);
  EXPECT_FALSE(evil.Header("Access-Control-Allow-Origin"));

  auto unauth = server.PostJson("/mcp", {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}},
                                {{"Origin", "https://app.example.org"}});
  EXPECT_EQ(unauth.status, 401);
  EXPECT_EQ(std::string(*unauth.Header("Access-Control-Allow-Origin")), "https://app.example.org");
  EXPECT_NE(std::string(*unauth.Header("Access-Control-Expose-Headers")).find("WWW-Authenticate"),
            std::string::npos);
}

}  // namespace
}  // namespace crmd::testing

namespace crmd::testing {
namespace {

TEST(McpLimits, OversizedBodyIs413) {
  TestServer server(TestServerOptions{.configure = [](Config& c) { c.max_body_bytes = 4096; }});
  McpClient c(server, McpClientOptions{.token = MintTestToken(server)});
  ASSERT_TRUE(c.Initialize().ok());
  std::string big = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":")" +
                    std::string(8192, 'a') + "\"}}";
  // The server answers 413 and closes without reading the body; the client can see the
  // reset before the answer, so a transport error is retried (no timing assumption).
  std::optional<int> status;
  for (int attempt = 0; attempt < 5 && !status; ++attempt) {
    try {
      status = c.RawPost(big).status;
    } catch (const std::exception&) {
    }
  }
  ASSERT_TRUE(status) << "no answer in 5 attempts";
  EXPECT_EQ(*status, 413);
  EXPECT_TRUE(c.Ping().ok()) << "a small request still works";
}

}  // namespace
}  // namespace crmd::testing

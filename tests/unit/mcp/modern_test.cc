// MCP 2026-07-28 on the endpoint, without the network: stateless requests (_meta),
// request metadata headers, server/discover, caching hints, multi round-trip tool calls.
// Every reply is checked against tests/data/mcp/2026-07-28.schema.json.
#include "src/mcp/modern.h"

#include <gtest/gtest.h>

#include "src/core/json_write.h"
#include "src/core/random.h"
#include "src/mcp/data_block.h"
#include "src/mcp/endpoint.h"
#include "tests/support/fake_clock.h"
#include "tests/support/mcp_client.h"
#include "tests/support/mcp_input_tool.h"

namespace crmd::mcp {
namespace {

using nlohmann::json;
using testing::ValidateMcpType;

constexpr const char* kV = "2026-07-28";

json Meta(json capabilities = json::object()) {
  return json{{kMetaProtocolVersion, kV},
              {kMetaClientCapabilities, std::move(capabilities)},
              {kMetaClientInfo, {{"name", "unit"}, {"version", "1"}}}};
}

json Body(const std::string& method, json params, int id = 7) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

http::Request Post(const json& body, http::Headers extra, bool mirror = true) {
  http::Request r;
  r.method = "POST";
  r.path = "/mcp";
  r.body = body.dump();
  r.headers = {{"Content-Type", "application/json"},
               {"Accept", "application/json, text/event-stream"}};
  if (mirror) {
    r.headers.emplace_back("MCP-Protocol-Version", kV);
    r.headers.emplace_back("Mcp-Method", body.value("method", ""));
    if (body.contains("params") && body["params"].contains("name") &&
        body["params"]["name"].is_string())
      r.headers.emplace_back("Mcp-Name", body["params"]["name"].get<std::string>());
  }
  for (auto& h : extra) {
    std::erase_if(r.headers, [&](const auto& e) { return http::IEquals(e.first, h.first); });
    if (!h.second.empty()) r.headers.push_back(h);  // an empty value removes the header
  }
  return r;
}

// Parses a reply and checks it against the 2026-07-28 schema: the specific response type
// for results, the specific error type for the codes the spec defines.
json Checked(const http::Response& res, const std::string& response_type) {
  json body = json::parse(res.body);
  if (auto v = ValidateMcpType(response_type, body, kV)) {
    ADD_FAILURE() << *v << " in " << res.body;
  }
  if (body.contains("result")) {
    EXPECT_EQ(body["result"]["_meta"][kMetaServerInfo]["name"], "crmd") << res.body;
  }
  EXPECT_FALSE(res.Header("Mcp-Session-Id")) << "2026-07-28 mints no session";
  return body;
}

class ModernEndpointTest : public ::testing::Test {
 protected:
  ModernEndpointTest() {
    EXPECT_TRUE(tools_.RegisterDescriptor(
        json{{"name", "whoami"},
             {"description", "Returns the caller."},
             {"scope", "contacts:read"},
             {"inputSchema", {{"type", "object"}, {"additionalProperties", false}}}},
        [](const ToolContext& ctx, const json&) {
          return ToolOutcome::Ok(json{{"subject", ctx.principal.subject}});
        }));
    EXPECT_TRUE(tools_.RegisterDescriptor(
        json{{"name", "alpha"}, {"description", "A."}, {"inputSchema", {{"type", "object"}}}},
        [](const ToolContext&, const json&) { return ToolOutcome::Ok(json::object()); }));
    EXPECT_TRUE(testing::RegisterInputTestTool(tools_));
    endpoint_ = MakeEndpoint({{.id = "k1", .secret = std::string(32, 'k')}});
    alice_ = {.subject = "alice", .client_id = "c1", .scopes = {"contacts:read"}};
    bob_ = {.subject = "bob", .client_id = "c1", .scopes = {"contacts:read"}};
  }

  std::unique_ptr<McpEndpoint> MakeEndpoint(std::vector<RequestStateKey> keys) {
    return std::make_unique<McpEndpoint>(
        McpEndpointOptions{
            .instructions = "Use previews.",
            .resource_metadata_url = "https://crm.test/.well-known/oauth-protected-resource/mcp",
            .request_state_keys = std::move(keys)},
        tools_, clock_, random_);
  }

  http::Response Send(const json& body, http::Headers extra = {}, const Principal* who = nullptr,
                      McpEndpoint* endpoint = nullptr) {
    return (endpoint ? endpoint : endpoint_.get())
        ->Handle(Post(body, std::move(extra)), who ? *who : alice_);
  }

  json Call(const json& args, json extra_params = json::object(),
            json caps = json{{"elicitation", json::object()}}, const Principal* who = nullptr,
            McpEndpoint* endpoint = nullptr) {
    json params{
        {"name", testing::kInputTestTool}, {"arguments", args}, {"_meta", Meta(std::move(caps))}};
    params.update(extra_params);
    auto res = Send(Body("tools/call", params), {}, who, endpoint);
    EXPECT_EQ(res.status, 200) << res.body;
    return Checked(res, "CallToolResultResponse");
  }

  FakeClock clock_;
  SecureRandom random_;
  ToolRegistry tools_;
  std::unique_ptr<McpEndpoint> endpoint_;
  Principal alice_, bob_;
};

// The schema checks these tests rely on do catch a 2026-07-28 violation.
TEST(ModernSchema, ValidatorRefusesAResultWithoutResultTypeOrCachingHints) {
  json call{{"jsonrpc", "2.0"}, {"id", 1}, {"result", {{"content", json::array()}}}};
  EXPECT_TRUE(ValidateMcpType("CallToolResultResponse", call, kV));
  EXPECT_FALSE(ValidateMcpType("CallToolResult", call["result"]));  // 2025-11-25 had no resultType
  json list{{"jsonrpc", "2.0"},
            {"id", 1},
            {"result", {{"resultType", "complete"}, {"tools", json::array()}}}};
  EXPECT_TRUE(ValidateMcpType("ListToolsResultResponse", list, kV));
  list["result"]["ttlMs"] = 0;
  list["result"]["cacheScope"] = "public";
  EXPECT_FALSE(ValidateMcpType("ListToolsResultResponse", list, kV));
}

// --- per-request protocol fields, no handshake ---

// The 2026-07-28 answer adds resultType and _meta beside the copied structured content
// (ToolCallAnswer): still the whole document serialised, the two copies equal.
TEST_F(ModernEndpointTest, ToolResultAnswerIsTheWholeDocumentSerialisedAndItsTwoCopiesAgree) {
  auto res = Send(
      Body("tools/call", {{"name", "whoami"}, {"arguments", json::object()}, {"_meta", Meta()}}));
  ASSERT_EQ(res.status, 200) << res.body;
  json body = Checked(res, "CallToolResultResponse");
  EXPECT_EQ(res.body, body.dump());
  EXPECT_EQ(ParseDataText(body["result"]["content"][0]["text"].get<std::string>()).value_or(json()),
            body["result"]["structuredContent"]);
  EXPECT_EQ(body["result"]["structuredContent"], json({{"subject", "alice"}}));
}

// The same for a result given as text with the server's registry options: the 2026-07-28
// answer, written without a tree, is the document the tree would give and valid.
TEST_F(ModernEndpointTest, TextResultAnswerIsTheWholeDocumentSerialisedAndValid) {
  const json tree{{"subject", "alice \"A\" Grüße"}, {"z", {1, 2}}};
  ToolRegistry tools(
      ToolRegistryOptions{.validate_output = true, .materialize_text_results = false});
  ASSERT_TRUE(tools.RegisterDescriptor(
      json{{"name", "texter"},
           {"description", "Returns its result as text."},
           {"scope", "contacts:read"},
           {"inputSchema", {{"type", "object"}, {"additionalProperties", false}}}},
      [&](const ToolContext&, const json&) { return ToolOutcome::OkText(DumpJson(tree)); }));
  McpEndpoint endpoint(
      McpEndpointOptions{.resource_metadata_url = "https://crm.test/m",
                         .request_state_keys = {{.id = "k1", .secret = std::string(32, 'k')}}},
      tools, clock_, random_);
  auto res = Send(
      Body("tools/call", {{"name", "texter"}, {"arguments", json::object()}, {"_meta", Meta()}}),
      {}, nullptr, &endpoint);
  ASSERT_EQ(res.status, 200) << res.body;
  json body = Checked(res, "CallToolResultResponse");
  EXPECT_EQ(res.body, body.dump());
  EXPECT_EQ(body["result"]["structuredContent"], tree);
  EXPECT_EQ(body["result"]["content"][0]["text"], DataText(DumpJson(tree)));
  EXPECT_EQ(body["result"]["resultType"], "complete");
}

TEST_F(ModernEndpointTest, RequestWithoutInitializeOrSessionIsServed_Basic_Statelessness) {
  auto res = Send(
      Body("tools/call", {{"name", "whoami"}, {"arguments", json::object()}, {"_meta", Meta()}}),
      {{"Mcp-Session-Id", "not-a-session"}});  // ignored, not refused
  ASSERT_EQ(res.status, 200) << res.body;
  json body = Checked(res, "CallToolResultResponse");
  EXPECT_EQ(body["result"]["resultType"], "complete");
  EXPECT_EQ(body["result"]["structuredContent"]["subject"], "alice");
}

TEST_F(ModernEndpointTest,
       MissingClientCapabilitiesIsInvalidParams400_Basic_PerRequestProtocolFields) {
  json meta = Meta();
  meta.erase(kMetaClientCapabilities);
  auto res = Send(Body("tools/list", {{"_meta", meta}}));
  EXPECT_EQ(res.status, 400);
  json body = Checked(res, "JSONRPCErrorResponse");
  EXPECT_EQ(body["error"]["code"], -32602);
  EXPECT_EQ(body["id"], 7);
  // Malformed clientInfo or logLevel too.
  meta = Meta();
  meta[kMetaClientInfo] = "me";
  EXPECT_EQ(Send(Body("tools/list", {{"_meta", meta}})).status, 400);
  meta = Meta();
  meta[kMetaLogLevel] = "loud";
  EXPECT_EQ(Send(Body("tools/list", {{"_meta", meta}})).status, 400);
}

TEST_F(ModernEndpointTest,
       ModernHeaderWithoutMetaIsInvalidParams400_Basic_PerRequestProtocolFields) {
  auto res = Send(Body("tools/list", json::object()));
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(Checked(res, "JSONRPCErrorResponse")["error"]["code"], -32602);
}

TEST_F(ModernEndpointTest,
       UnsupportedVersionIs32022WithSupportedList_Versioning_ProtocolVersionNegotiation) {
  json meta = Meta();
  meta[kMetaProtocolVersion] = "2099-01-01";
  auto res = Send(Body("tools/list", {{"_meta", meta}}), {{"MCP-Protocol-Version", "2099-01-01"}});
  EXPECT_EQ(res.status, 400);
  json body = Checked(res, "UnsupportedProtocolVersionError");
  EXPECT_EQ(body["error"]["code"], -32022);
  EXPECT_EQ(body["error"]["data"]["requested"], "2099-01-01");
  EXPECT_EQ(body["error"]["data"]["supported"],
            (json{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}));
}

TEST_F(ModernEndpointTest, LogLevelIsAcceptedAndNoLogNotificationIsSent_Logging) {
  json meta = Meta();
  meta[kMetaLogLevel] = "debug";
  auto res = Send(Body("tools/list", {{"_meta", meta}}));
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.Header("Content-Type").value_or(""), "application/json");
}

TEST_F(ModernEndpointTest, NotificationIs202AndResponseIs400_StreamableHttp_SendingMessages) {
  json note{
      {"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"_meta", Meta()}}}};
  auto res = Send(note);
  EXPECT_EQ(res.status, 202);
  EXPECT_TRUE(res.body.empty());
  json response{{"jsonrpc", "2.0"}, {"id", 3}, {"result", json::object()}};
  res = Send(response);
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(Checked(res, "JSONRPCErrorResponse")["error"]["code"], -32600);
}

// --- request metadata headers ---

TEST_F(ModernEndpointTest, HeaderMismatchIs32020_StreamableHttp_ServerValidation) {
  json call =
      Body("tools/call", {{"name", "whoami"}, {"arguments", json::object()}, {"_meta", Meta()}});
  struct Case {
    const char* what;
    http::Headers headers;
  };
  for (const Case& c :
       {Case{"missing MCP-Protocol-Version", {{"MCP-Protocol-Version", ""}}},
        Case{"other MCP-Protocol-Version", {{"MCP-Protocol-Version", "2025-11-25"}}},
        Case{"missing Mcp-Method", {{"Mcp-Method", ""}}},
        Case{"other Mcp-Method", {{"Mcp-Method", "tools/list"}}},
        Case{"missing Mcp-Name", {{"Mcp-Name", ""}}},
        Case{"other Mcp-Name", {{"Mcp-Name", "alpha"}}},
        Case{"bad base64 Mcp-Name", {{"Mcp-Name", "=?base64?***?="}}}}) {
    auto res = Send(call, c.headers);
    EXPECT_EQ(res.status, 400) << c.what;
    EXPECT_EQ(Checked(res, "HeaderMismatchError")["error"]["code"], -32020) << c.what;
  }
}

// The header names 2026-07-28 and _meta a session-based revision: the two disagree, which
// is HeaderMismatch (-32020, HTTP 400) with the request's id, not the session path's
// refusal of an unsupported MCP-Protocol-Version (-32000).
TEST_F(ModernEndpointTest,
       A2026HeaderOverA2025MetaIsHeaderMismatch_StreamableHttp_ProtocolVersionHeader) {
  json meta = Meta();
  meta[kMetaProtocolVersion] = "2025-11-25";
  for (const char* method : {"tools/list", "tools/call"}) {
    json params{{"_meta", meta}};
    if (std::string(method) == "tools/call") {
      params["name"] = "whoami";
      params["arguments"] = json::object();
    }
    auto res = Send(Body(method, params, 11));
    EXPECT_EQ(res.status, 400) << method << ": " << res.body;
    json body = Checked(res, "HeaderMismatchError");
    EXPECT_EQ(body["id"], 11) << res.body;
    EXPECT_EQ(body["error"]["code"], -32020) << res.body;
    EXPECT_EQ(body["error"]["message"],
              "Header mismatch: MCP-Protocol-Version header '2026-07-28' does not match "
              "_meta.io.modelcontextprotocol/protocolVersion '2025-11-25'")
        << res.body;
  }
}

TEST_F(ModernEndpointTest,
       Base64EncodedMcpNameIsDecodedBeforeComparing_StreamableHttp_ValueEncoding) {
  json call =
      Body("tools/call", {{"name", "whoami"}, {"arguments", json::object()}, {"_meta", Meta()}});
  auto res = Send(call, {{"Mcp-Name", "=?base64?d2hvYW1p?="}});  // "whoami"
  EXPECT_EQ(res.status, 200) << res.body;
}

TEST(ModernHeaders,
     DecodesTheBase64SentinelAndRefusesControlCharacters_StreamableHttp_ValueEncoding) {
  EXPECT_EQ(DecodeMirroredHeader("us-west1"), "us-west1");
  EXPECT_EQ(DecodeMirroredHeader("=?base64?SGVsbG8sIOS4lueVjA==?="), "Hello, 世界");
  EXPECT_EQ(DecodeMirroredHeader("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="), "=?base64?literal?=");
  EXPECT_FALSE(DecodeMirroredHeader("line1\nline2"));
  EXPECT_FALSE(DecodeMirroredHeader("=?base64?not base64!?="));
}

// --- server/discover, results ---

TEST_F(ModernEndpointTest, DiscoverListsVersionsCapabilitiesAndIdentity_Server_Discover) {
  auto res = Send(Body("server/discover", {{"_meta", Meta()}}));
  ASSERT_EQ(res.status, 200) << res.body;
  json r = Checked(res, "DiscoverResultResponse")["result"];
  EXPECT_EQ(r["resultType"], "complete");
  EXPECT_EQ(r["supportedVersions"][0], "2026-07-28");
  EXPECT_EQ(r["capabilities"], (json{{"tools", {{"listChanged", false}}}}));
  EXPECT_EQ(r["instructions"], "Use previews.");
  EXPECT_EQ(r["cacheScope"], "public");
  EXPECT_GT(r["ttlMs"].get<int64_t>(), 0);
}

TEST_F(ModernEndpointTest, ToolsListCarriesCachingHintsInNameOrder_Caching_CacheableResults) {
  auto first =
      Checked(Send(Body("tools/list", {{"_meta", Meta()}})), "ListToolsResultResponse")["result"];
  auto second =
      Checked(Send(Body("tools/list", {{"_meta", Meta()}})), "ListToolsResultResponse")["result"];
  EXPECT_EQ(first["resultType"], "complete");
  EXPECT_EQ(first["cacheScope"], "public");
  EXPECT_EQ(first["ttlMs"], McpEndpointOptions{}.list_ttl_ms);
  EXPECT_EQ(first["tools"], second["tools"]);  // Tools "deterministic order"
  std::vector<std::string> names;
  for (const auto& t : first["tools"]) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "test_elicit_confirm", "whoami"}));
}

TEST_F(ModernEndpointTest,
       RemovedAndUnknownMethodsAre404MethodNotFound_StreamableHttp_ProtocolVersionHeader) {
  for (const char* method : {"ping", "logging/setLevel", "resources/list", "nope"}) {
    auto res = Send(Body(method, {{"_meta", Meta()}}));
    EXPECT_EQ(res.status, 404) << method;
    json body = Checked(res, "JSONRPCErrorResponse");
    EXPECT_EQ(body["error"]["code"], -32601) << method;
  }
}

TEST_F(ModernEndpointTest, SessionClientsAreUnchangedBesideModernOnes_Versioning_DualEra) {
  auto init = endpoint_->Handle(
      Post(Body("initialize", {{"protocolVersion", "2026-07-28"},
                               {"capabilities", json::object()},
                               {"clientInfo", {{"name", "t"}, {"version", "1"}}}}),
           {}, false),
      alice_);
  ASSERT_EQ(init.status, 200) << init.body;
  // initialize negotiates the newest session-based revision; no resultType there.
  json r = json::parse(init.body)["result"];
  EXPECT_EQ(r["protocolVersion"], "2025-11-25");
  EXPECT_FALSE(r.contains("resultType"));
  std::string sid(init.Header("Mcp-Session-Id").value_or(""));
  ASSERT_FALSE(sid.empty());
  auto list = endpoint_->Handle(
      Post(Body("tools/list", json::object()), {{"Mcp-Session-Id", sid}}, false), alice_);
  ASSERT_EQ(list.status, 200) << list.body;
  json lr = json::parse(list.body)["result"];
  EXPECT_FALSE(lr.contains("resultType") || lr.contains("ttlMs"));
  if (auto v = ValidateMcpType("ListToolsResult", lr)) {
    ADD_FAILURE() << *v;
  }
  // The test tool cannot ask a session client for input: a tool error, not a protocol one.
  auto call = endpoint_->Handle(
      Post(Body("tools/call", {{"name", testing::kInputTestTool}, {"arguments", {{"item", "x"}}}}),
           {{"Mcp-Session-Id", sid}}, false),
      alice_);
  ASSERT_EQ(call.status, 200) << call.body;
  EXPECT_TRUE(json::parse(call.body)["result"]["isError"].get<bool>());
}

// --- multi round-trip requests ---

TEST_F(ModernEndpointTest, InputRequiredThenRetryCompletes_Mrtr_BasicWorkflow) {
  json args{{"item", "contacts 1-3"}};
  json first = Call(args)["result"];
  ASSERT_EQ(first["resultType"], "input_required") << first;
  if (auto v = ValidateMcpType("InputRequiredResult", first, kV)) {
    ADD_FAILURE() << *v;
  }
  EXPECT_EQ(first["inputRequests"]["confirm"]["method"], "elicitation/create");
  EXPECT_EQ(first["inputRequests"]["confirm"]["params"]["mode"], "form");
  EXPECT_FALSE(first.contains("ttlMs"));
  std::string state = first["requestState"];

  json done = Call(
      args, {{"requestState", state},
             {"inputResponses",
              {{"confirm",
                {{"action", "accept"}, {"content", {{"answer", "contacts 1-3"}}}}}}}})["result"];
  EXPECT_EQ(done["resultType"], "complete");
  EXPECT_EQ(done["structuredContent"],
            (json{{"confirmed", true}, {"item", "contacts 1-3"}, {"rounds", 1}}));
}

TEST_F(ModernEndpointTest, MissingOrWrongAnswerAsksAgain_Mrtr_ErrorHandling) {
  json args{{"item", "x"}};
  std::string state = Call(args)["result"]["requestState"];
  json again = Call(args, {{"requestState", state}, {"inputResponses", json::object()}})["result"];
  ASSERT_EQ(again["resultType"], "input_required");
  json wrong = Call(
      args, {{"requestState", again["requestState"]},
             {"inputResponses",
              {{"confirm", {{"action", "accept"}, {"content", {{"answer", "y"}}}}}}}})["result"];
  ASSERT_EQ(wrong["resultType"], "input_required");
  json declined =
      Call(args, {{"requestState", wrong["requestState"]},
                  {"inputResponses", {{"confirm", {{"action", "decline"}}}}}})["result"];
  EXPECT_EQ(declined["structuredContent"],
            (json{{"confirmed", false}, {"item", "x"}, {"rounds", 3}, {"action", "decline"}}));
}

TEST_F(ModernEndpointTest, AnotherNodeWithTheSameKeyFinishesTheRequest_Mrtr_BasicWorkflow) {
  auto node_b = MakeEndpoint({{.id = "k1", .secret = std::string(32, 'k')}});
  auto node_c = MakeEndpoint({{.id = "k1", .secret = std::string(32, 'z')}});
  json args{{"item", "x"}, {"mode", "url"}};
  json caps{{"elicitation", {{"url", json::object()}}}};
  json first = Call(args, json::object(), caps)["result"];
  ASSERT_EQ(first["resultType"], "input_required");
  EXPECT_EQ(first["inputRequests"]["confirm"]["params"]["url"], testing::kInputTestUrl);
  json retry{{"requestState", first["requestState"]},
             {"inputResponses", {{"confirm", {{"action", "accept"}}}}}};
  json done = Call(args, retry, caps, nullptr, node_b.get())["result"];
  EXPECT_EQ(done["structuredContent"]["confirmed"], true);
  // A node with another key refuses it.
  json params{{"name", testing::kInputTestTool}, {"arguments", args}, {"_meta", Meta(caps)}};
  params.update(retry);
  auto res = Send(Body("tools/call", params), {}, nullptr, node_c.get());
  EXPECT_EQ(Checked(res, "JSONRPCErrorResponse")["error"]["code"], -32602);
}

TEST_F(ModernEndpointTest, StateOfAnotherSubjectToolOrArgumentsIsRefused_Mrtr_ServerRequirements5) {
  json args{{"item", "x"}};
  std::string state = Call(args)["result"]["requestState"];
  json retry{{"requestState", state}, {"inputResponses", {{"confirm", {{"action", "decline"}}}}}};
  auto expect_refused = [&](const http::Response& res, const char* what) {
    EXPECT_EQ(res.status, 200) << what;
    json body = Checked(res, "JSONRPCErrorResponse");
    EXPECT_EQ(body["error"]["code"], -32602) << what << " " << res.body;
  };
  json params{{"name", testing::kInputTestTool},
              {"arguments", args},
              {"_meta", Meta({{"elicitation", json::object()}})}};
  params.update(retry);
  expect_refused(Send(Body("tools/call", params), {}, &bob_), "another subject");
  json other_args = params;
  other_args["arguments"] = {{"item", "y"}};
  expect_refused(Send(Body("tools/call", other_args)), "other arguments");
  json tampered = params;
  tampered["requestState"] =
      state.substr(0, state.size() - 2) + (state.back() == 'A' ? "BB" : "AA");
  expect_refused(Send(Body("tools/call", tampered)), "tampered");
  clock_.Advance(RequestStateOptions{}.ttl_s);
  expect_refused(Send(Body("tools/call", params)), "expired");
}

TEST_F(ModernEndpointTest, MalformedInputResponsesAreInvalidParams_Mrtr_ErrorHandling) {
  json args{{"item", "x"}};
  std::string state = Call(args)["result"]["requestState"];
  for (const json& extra :
       {json{{"requestState", state}, {"inputResponses", "yes"}},
        json{{"requestState", state}, {"inputResponses", {{"confirm", "accept"}}}}}) {
    json params{{"name", testing::kInputTestTool},
                {"arguments", args},
                {"_meta", Meta({{"elicitation", json::object()}})}};
    params.update(extra);
    auto res = Send(Body("tools/call", params));
    EXPECT_EQ(json::parse(res.body)["error"]["code"], -32602) << extra;
  }
}

TEST_F(ModernEndpointTest, InputResponsesWithoutRequestStateAreIgnored_Mrtr_ServersShouldIgnore) {
  // Answers to a question crmd never asked (no requestState) are unrecognised
  // information: ignored, and the call is a first round.
  json params{{"name", testing::kInputTestTool},
              {"arguments", {{"item", "x"}}},
              {"inputResponses", {{"confirm", {{"action", "accept"}}}}},
              {"_meta", Meta({{"elicitation", json::object()}})}};
  json reply = json::parse(Send(Body("tools/call", params)).body);
  EXPECT_EQ(reply["result"]["resultType"], "input_required") << reply;
}

TEST_F(ModernEndpointTest, ElicitationModeTheClientLacksIs32021_Basic_PerRequestProtocolFields) {
  json params{{"name", testing::kInputTestTool},
              {"arguments", {{"item", "x"}, {"mode", "url"}}},
              {"_meta", Meta({{"elicitation", json::object()}})}};  // form only
  auto res = Send(Body("tools/call", params));
  EXPECT_EQ(res.status, 400);
  json body = Checked(res, "MissingRequiredClientCapabilityError");
  EXPECT_EQ(body["error"]["data"]["requiredCapabilities"],
            (json{{"elicitation", {{"url", json::object()}}}}));
  params["_meta"] = Meta();  // no elicitation at all
  params["arguments"] = {{"item", "x"}};
  res = Send(Body("tools/call", params));
  EXPECT_EQ(res.status, 400);
  Checked(res, "MissingRequiredClientCapabilityError");
}

}  // namespace
}  // namespace crmd::mcp

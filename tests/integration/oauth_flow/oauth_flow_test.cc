// End to end, as an MCP client and a person would do it over real HTTP: discovery →
// dynamic registration → authorization with PKCE through the login and consent pages →
// token → MCP initialize, tools/list, tools/call → refresh → revoke → the revoked token is
// refused.
#include <gtest/gtest.h>

#include "src/app/services.h"
#include "tests/support/browser.h"
#include "tests/support/mcp_client.h"
#include "tests/support/test_server.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

// A test-only tool that answers who called it, so the test sees the token's principal.
TestServerOptions WithWhoAmITool() {
  return TestServerOptions{
      .before_start =
          [](app::App::Services& s) {
            EXPECT_TRUE(s.tools->RegisterDescriptor(
                json{{"name", "test_whoami"},
                     {"description", "Test-only: the caller's subject, client and scopes."},
                     {"scope", "contacts:read"},
                     {"annotations", {{"readOnlyHint", true}}},
                     {"inputSchema", {{"type", "object"}, {"additionalProperties", false}}},
                     {"outputSchema",
                      {{"type", "object"},
                       {"properties",
                        {{"subject", {{"type", "string"}}},
                         {"client_id", {{"type", "string"}}},
                         {"scope", {{"type", "string"}}}}},
                       {"required", {"subject", "client_id", "scope"}}}}},
                [](const mcp::ToolContext& ctx, const json&) {
                  std::string scope;
                  for (const auto& s : ctx.principal.scopes)
                    scope += (scope.empty() ? "" : " ") + s;
                  return mcp::ToolOutcome::Ok(json{{"subject", ctx.principal.subject},
                                                   {"client_id", ctx.principal.client_id},
                                                   {"scope", scope}});
                }));
          },
  };
}

http::ClientResponse TokenRequest(TestServer& server,
                                  const std::vector<std::pair<std::string, std::string>>& form) {
  return server.PostForm("/oauth/token", EncodeForm(form));
}

TEST(OAuthFlow, DiscoveryRegistrationConsentTokenMcpRefreshRevoke) {
  TestServer server(WithWhoAmITool());
  OAuthFlowResult flow = RunOAuthFlow(server, {.scope = "contacts:read contacts:write"});
  ASSERT_TRUE(flow.ok()) << flow.error;

  // Discovery was real (RFC 9728 → RFC 8414), not the fallback.
  EXPECT_EQ(flow.protected_resource_metadata["resource"], server.base_url() + "/mcp");
  EXPECT_EQ(flow.authorization_server_metadata["issuer"], server.base_url());
  EXPECT_EQ(flow.authorization_server_metadata["registration_endpoint"],
            server.base_url() + "/oauth/register");
  EXPECT_EQ(flow.authorization_server_metadata["authorization_endpoint"],
            server.base_url() + "/oauth/authorize");
  EXPECT_EQ(flow.token_response["token_type"], "Bearer");
  EXPECT_EQ(flow.scope, "contacts:read contacts:write");
  EXPECT_FALSE(flow.refresh_token.empty());

  auto user = server.app().services().users->FindByEmail("alice@example.com");
  ASSERT_TRUE(user && *user);

  McpClient mcp(server, McpClientOptions{.token = flow.access_token});
  auto init = mcp.Initialize();
  ASSERT_TRUE(init.ok()) << init.raw;
  json tools = mcp.ListAllTools();
  bool listed = false;
  for (const auto& t : tools) listed |= t["name"] == "test_whoami";
  EXPECT_TRUE(listed) << tools.dump();
  json me = mcp.CallToolOk("test_whoami");
  EXPECT_EQ(me["subject"], std::to_string((*user)->id));
  EXPECT_EQ(me["client_id"], flow.client_id);
  EXPECT_EQ(me["scope"], "contacts:read contacts:write");

  // Refresh (public client: client_id only) rotates the refresh token (OAuth 2.1 §4.3.1).
  auto refreshed = TokenRequest(server, {{"grant_type", "refresh_token"},
                                         {"refresh_token", flow.refresh_token},
                                         {"client_id", flow.client_id}});
  ASSERT_EQ(refreshed.status, 200) << refreshed.body;
  json r = JsonBody(refreshed);
  std::string access2 = r["access_token"], refresh2 = r["refresh_token"];
  EXPECT_NE(access2, flow.access_token);
  EXPECT_NE(refresh2, flow.refresh_token);
  McpClient mcp2(server, McpClientOptions{.token = access2});
  ASSERT_TRUE(mcp2.Initialize().ok());
  EXPECT_EQ(mcp2.CallToolOk("test_whoami")["client_id"], flow.client_id);

  // Revoke (RFC 7009), then the token is refused at /mcp.
  auto revoked = server.PostForm("/oauth/revoke",
                                 EncodeForm({{"token", access2}, {"client_id", flow.client_id}}));
  EXPECT_EQ(revoked.status, 200) << revoked.body;
  McpClient after(server, McpClientOptions{.token = access2, .validate = false});
  auto refused = after.Initialize();
  EXPECT_EQ(refused.status, 401) << refused.raw;
  EXPECT_NE(std::string(refused.Header("WWW-Authenticate").value_or("")).find("invalid_token"),
            std::string::npos);
}

TEST(OAuthFlow, NarrowedConsentNarrowsTheToken) {
  TestServer server(WithWhoAmITool());
  OAuthFlowResult flow = RunOAuthFlow(
      server, {.scope = "contacts:read contacts:write lists:read", .on_consent = [](Form& f) {
                 EXPECT_TRUE(f.SetChecked("scope", "contacts:write", false));
               }});
  ASSERT_TRUE(flow.ok()) << flow.error;
  EXPECT_EQ(flow.scope, "contacts:read lists:read");
  McpClient mcp(server, McpClientOptions{.token = flow.access_token});
  ASSERT_TRUE(mcp.Initialize().ok());
  EXPECT_EQ(mcp.CallToolOk("test_whoami")["scope"], "contacts:read lists:read");
}

TEST(OAuthFlow, ConfidentialClientAuthenticatesWithBasic_Rfc6749_2_3_1) {
  TestServer server(WithWhoAmITool());
  OAuthFlowResult flow = RunOAuthFlow(server, {.scope = "contacts:read", .confidential = true});
  ASSERT_TRUE(flow.ok()) << flow.error;
  EXPECT_FALSE(flow.client_secret.empty());
  McpClient mcp(server, McpClientOptions{.token = flow.access_token});
  ASSERT_TRUE(mcp.Initialize().ok());
  EXPECT_EQ(mcp.CallToolOk("test_whoami")["client_id"], flow.client_id);
}

TEST(OAuthFlow, CodeIsSingleUse_Rfc6749_4_1_2) {
  TestServer server;
  OAuthFlowResult flow = RunOAuthFlow(server, {.scope = "contacts:read"});
  ASSERT_TRUE(flow.ok()) << flow.error;
  auto again = TokenRequest(server, {{"grant_type", "authorization_code"},
                                     {"code", flow.code},
                                     {"redirect_uri", flow.redirect_uri},
                                     {"code_verifier", flow.code_verifier},
                                     {"client_id", flow.client_id}});
  EXPECT_EQ(again.status, 400);
  EXPECT_EQ(JsonBody(again)["error"], "invalid_grant");
}

TEST(OAuthFlow, WrongVerifierIsRefused_Rfc7636_4_6) {
  TestServer server;
  OAuthFlowResult flow = RunOAuthFlow(server, {.scope = "contacts:read", .exchange_code = false});
  ASSERT_TRUE(flow.ok()) << flow.error;
  auto r = TokenRequest(server, {{"grant_type", "authorization_code"},
                                 {"code", flow.code},
                                 {"redirect_uri", flow.redirect_uri},
                                 {"code_verifier", std::string(43, 'A')},
                                 {"client_id", flow.client_id}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(JsonBody(r)["error"], "invalid_grant");
}

}  // namespace
}  // namespace crmd::testing

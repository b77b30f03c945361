// MCP Apps (SEP-1865, io.modelcontextprotocol/ui) on both protocol generations: the views
// are offered only to a client that declares the extension, and a client that does not
// gets, byte for byte, what a server without views answers (docs/mcp.md "Views").
#include <gtest/gtest.h>

#include "src/app/app.h"
#include "src/app/services.h"
#include "tests/support/mcp_client.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

const json kUi{{"extensions",
                {{"io.modelcontextprotocol/ui", {{"mimeTypes", {"text/html;profile=mcp-app"}}}}}}};
const json kNoUi{{"elicitation", json::object()}};
const std::vector<std::string> kScopes = {"contacts:read", "contacts:write", "reports:read"};

class McpAppsTest : public ::testing::Test {
 protected:
  McpAppsTest()
      : without_views_(TestServerOptions{.configure = [](Config& c) { c.mcp_apps = false; }}) {}

  McpClient Session(TestServer& server, const json& capabilities) {
    McpClient c(server, McpClientOptions{.token = MintTestToken(server, {.scopes = kScopes})});
    auto r = c.Initialize("2025-11-25", capabilities);
    EXPECT_TRUE(r.ok()) << r.raw;
    return c;
  }
  McpClient Modern(TestServer& server, const json& capabilities) {
    McpClient c(server, McpClientOptions{.token = MintTestToken(server, {.scopes = kScopes})});
    c.UseModern({.capabilities = capabilities});
    return c;
  }
  // Every page of tools/list, as the bytes of each answer.
  static std::vector<std::string> ToolPages(McpClient& c) {
    std::vector<std::string> pages;
    std::optional<std::string> cursor;
    do {
      auto r = c.ListTools(cursor);
      EXPECT_TRUE(r.ok()) << r.raw;
      if (!r.ok()) break;
      pages.push_back(r.raw);
      cursor = r.result().contains("nextCursor")
                   ? std::optional<std::string>(r.result()["nextCursor"])
                   : std::nullopt;
    } while (cursor);
    return pages;
  }
  static json ToolNamed(McpClient& c, const std::string& name) {
    for (const auto& t : c.ListAllTools())
      if (t["name"] == name) return t;
    return nullptr;
  }

  TestServer server_;
  TestServer without_views_;
};

TEST_F(McpAppsTest, WithoutTheExtensionInitializeAndToolsListAreByteIdentical_2025_11_25) {
  auto a = Session(server_, kNoUi);
  auto b = Session(without_views_, kNoUi);
  McpClient a2(server_, McpClientOptions{.token = MintTestToken(server_, {.scopes = kScopes})});
  McpClient b2(without_views_,
               McpClientOptions{.token = MintTestToken(without_views_, {.scopes = kScopes})});
  auto ia = a2.Initialize("2025-11-25", kNoUi);
  auto ib = b2.Initialize("2025-11-25", kNoUi);
  EXPECT_EQ(ia.raw, ib.raw);
  EXPECT_FALSE(ia.result()["capabilities"].contains("extensions"));
  EXPECT_FALSE(ia.result()["capabilities"].contains("resources"));
  auto pa = ToolPages(a);
  EXPECT_EQ(pa, ToolPages(b));
  EXPECT_EQ(pa.front().find("resourceUri"), std::string::npos);
  // resources/* stay unknown methods, as before the views.
  auto ra = a.Request("resources/list");
  auto rb = b.Request("resources/list");
  EXPECT_EQ(ra.raw, rb.raw);
  EXPECT_EQ(ra.error()["code"], -32601);
}

TEST_F(McpAppsTest, WithoutTheExtensionDiscoverAndToolsListAreByteIdentical_2026_07_28) {
  auto a = Modern(server_, kNoUi);
  auto b = Modern(without_views_, kNoUi);
  auto da = a.Discover();
  auto db = b.Discover();
  EXPECT_EQ(da.raw, db.raw);
  EXPECT_FALSE(da.result()["capabilities"].contains("extensions"));
  EXPECT_EQ(ToolPages(a), ToolPages(b));
  auto ra = a.Request("resources/read", {{"uri", "ui://crmd/confirm"}});
  auto rb = b.Request("resources/read", {{"uri", "ui://crmd/confirm"}});
  EXPECT_EQ(ra.status, 404);
  EXPECT_EQ(ra.raw, rb.raw);
}

// The views add nothing to tool results: the same call answers the same bytes whether the
// client declared the extension or not, on either generation.
TEST_F(McpAppsTest, ToolResultsAreTheSameBytesWithAndWithoutTheExtension) {
  auto writer = Session(server_, kNoUi);
  auto made = writer.CallToolOk(
      "create_contact", {{"email", "ada@example.com"}, {"first_name", "Ada"}, {"tags", {"vip"}}});
  ASSERT_TRUE(made.is_object());
  const json get{{"id", made["contact"]["id"]}};
  for (bool modern : {false, true}) {
    SCOPED_TRACE(modern ? "2026-07-28" : "2025-11-25");
    auto plain = modern ? Modern(server_, kNoUi) : Session(server_, kNoUi);
    auto apps = modern ? Modern(server_, kUi) : Session(server_, kUi);
    for (const auto& [tool, args] :
         std::vector<std::pair<std::string, json>>{{"get_contact", get},
                                                   {"list_contacts", json::object()},
                                                   {"get_contact", {{"id", 999}}}}) {
      auto p = plain.CallTool(tool, args);
      auto q = apps.CallTool(tool, args);
      EXPECT_EQ(p.raw, q.raw) << tool;
    }
  }
}

TEST_F(McpAppsTest, DeclaringTheExtensionShowsViewsAndToolLinks_2025_11_25) {
  McpClient c(server_, McpClientOptions{.token = MintTestToken(server_, {.scopes = kScopes})});
  auto init = c.Initialize("2025-11-25", kUi);
  ASSERT_TRUE(init.ok()) << init.raw;
  const json& caps = init.result()["capabilities"];
  EXPECT_EQ(caps["extensions"]["io.modelcontextprotocol/ui"]["mimeTypes"],
            json::array({"text/html;profile=mcp-app"}));
  EXPECT_TRUE(caps["resources"].is_object());
  EXPECT_EQ(ToolNamed(c, "delete_contacts")["_meta"]["ui"]["resourceUri"], "ui://crmd/confirm");
  EXPECT_EQ(ToolNamed(c, "activate_campaign")["_meta"]["ui"]["resourceUri"], "ui://crmd/confirm");
  EXPECT_EQ(ToolNamed(c, "get_dashboard")["_meta"]["ui"]["resourceUri"], "ui://crmd/dashboard");
  EXPECT_EQ(ToolNamed(c, "get_campaign_report")["_meta"]["ui"]["resourceUri"],
            "ui://crmd/dashboard");
  EXPECT_EQ(ToolNamed(c, "get_contact")["_meta"]["ui"]["resourceUri"], "ui://crmd/contact");
  EXPECT_FALSE(ToolNamed(c, "list_contacts").contains("_meta"));

  auto list = c.Request("resources/list");
  ASSERT_TRUE(list.ok()) << list.raw;
  std::vector<std::string> uris;
  for (const auto& r : list.result()["resources"]) {
    uris.push_back(r["uri"]);
    EXPECT_EQ(r["mimeType"], "text/html;profile=mcp-app");
    EXPECT_EQ(r["_meta"]["ui"]["csp"]["connectDomains"], json::array());
    EXPECT_EQ(r["_meta"]["ui"]["csp"]["resourceDomains"], json::array());
    EXPECT_EQ(r["_meta"]["ui"]["csp"]["frameDomains"], json::array());
    EXPECT_EQ(r["_meta"]["ui"]["permissions"], json::object());
  }
  EXPECT_EQ(uris, (std::vector<std::string>{"ui://crmd/confirm", "ui://crmd/contact",
                                            "ui://crmd/dashboard"}));
  for (const auto& uri : uris) {
    auto read = c.Request("resources/read", {{"uri", uri}});
    ASSERT_TRUE(read.ok()) << read.raw;
    const json& content = read.result()["contents"][0];
    EXPECT_EQ(content["uri"], uri);
    EXPECT_EQ(content["mimeType"], "text/html;profile=mcp-app");
    const std::string html = content["text"];
    EXPECT_LT(html.size(), 60u * 1024) << uri;
    EXPECT_NE(html.find("<script>"), std::string::npos);
    EXPECT_NE(html.find("ui/initialize"), std::string::npos);
    EXPECT_NE(html.find("default-src 'none'; script-src 'unsafe-inline'"), std::string::npos);
    // Nothing is loaded from anywhere: no src= or href= to another document.
    EXPECT_EQ(html.find(" src=\""), std::string::npos) << uri;
    EXPECT_EQ(html.find("href=\"http"), std::string::npos) << uri;
    EXPECT_EQ(content["_meta"]["ui"]["csp"]["connectDomains"], json::array());
  }
  auto missing = c.Request("resources/read", {{"uri", "ui://crmd/nothing"}});
  EXPECT_EQ(missing.error()["code"], -32002);
  EXPECT_EQ(missing.error()["data"]["uri"], "ui://crmd/nothing");
  auto bad = c.Request("resources/read", {{"uri", 7}});
  EXPECT_EQ(bad.error()["code"], -32602);
}

TEST_F(McpAppsTest, DeclaringTheExtensionShowsViewsAndToolLinks_2026_07_28) {
  auto c = Modern(server_, kUi);
  auto d = c.Discover();
  ASSERT_TRUE(d.ok()) << d.raw;
  EXPECT_TRUE(d.result()["capabilities"]["extensions"].contains("io.modelcontextprotocol/ui"));
  EXPECT_EQ(ToolNamed(c, "delete_contacts")["_meta"]["ui"]["resourceUri"], "ui://crmd/confirm");
  EXPECT_EQ(ToolNamed(c, "get_contacts_report")["_meta"]["ui"]["resourceUri"],
            "ui://crmd/dashboard");
  auto list = c.Request("resources/list");
  ASSERT_TRUE(list.ok()) << list.raw;
  EXPECT_EQ(list.result()["resources"].size(), 3u);
  auto read = c.Request("resources/read", {{"uri", "ui://crmd/dashboard"}});
  ASSERT_TRUE(read.ok()) << read.raw;
  EXPECT_EQ(read.result()["contents"][0]["mimeType"], "text/html;profile=mcp-app");
  auto missing = c.Request("resources/read", {{"uri", "ui://crmd/nothing"}});
  EXPECT_EQ(missing.error()["code"], -32602);
  EXPECT_EQ(missing.error()["data"]["uri"], "ui://crmd/nothing");
  // The extension is per request: the next request without it sees no views.
  auto plain = Modern(server_, kNoUi);
  EXPECT_FALSE(ToolNamed(plain, "delete_contacts").contains("_meta"));
  EXPECT_EQ(plain.Request("resources/list").status, 404);
}

TEST_F(McpAppsTest, AnExtensionWithoutTheAppMimeTypeIsNotOffered) {
  const json other{
      {"extensions", {{"io.modelcontextprotocol/ui", {{"mimeTypes", {"text/html+skybridge"}}}}}}};
  McpClient c(server_, McpClientOptions{.token = MintTestToken(server_, {.scopes = kScopes})});
  auto init = c.Initialize("2025-11-25", other);
  ASSERT_TRUE(init.ok()) << init.raw;
  EXPECT_FALSE(init.result()["capabilities"].contains("extensions"));
  EXPECT_EQ(c.Request("resources/list").error()["code"], -32601);
  // With the views switched off, a client that declares the extension is not offered it.
  McpClient off(without_views_,
                McpClientOptions{.token = MintTestToken(without_views_, {.scopes = kScopes})});
  auto init_off = off.Initialize("2025-11-25", kUi);
  EXPECT_FALSE(init_off.result()["capabilities"].contains("extensions"));
}

// Reading a view needs only a valid token (a view holds no one's data); its data comes from
// tool results, under each tool's scope.
TEST_F(McpAppsTest, ViewsNeedATokenButNoScope) {
  McpClient c(server_,
              McpClientOptions{.token = MintTestToken(server_, {.scopes = {"lists:read"}})});
  ASSERT_TRUE(c.Initialize("2025-11-25", kUi).ok());
  EXPECT_TRUE(c.Request("resources/read", {{"uri", "ui://crmd/contact"}}).ok());
  auto refused = c.CallTool("get_contact", {{"id", 1}});
  EXPECT_EQ(refused.status, 403);
  McpClient anonymous(server_, McpClientOptions{});
  EXPECT_EQ(anonymous.RawPost(R"({"jsonrpc":"2.0","id":1,"method":"resources/list"})").status, 401);
}

// The confirm view's recipient sample is part of the preview (so the approval page has it
// too): five of the audience, in id order, each with its address and names.
TEST_F(McpAppsTest, AnActivationPreviewCarriesASampleOfRecipients) {
  McpClient c(server_, McpClientOptions{
                           .token = MintTestToken(
                               server_, {.scopes = {"contacts:write", "lists:write",
                                                    "campaigns:write", "campaigns:activate"}})});
  ASSERT_TRUE(c.Initialize("2025-11-25", kUi).ok());
  auto list = c.CallToolOk("create_list", {{"name", "Launch"}});
  const int64_t list_id = list["list"]["id"];
  std::vector<std::string> emails;
  for (int i = 0; i < 7; ++i) {
    emails.push_back("p" + std::to_string(i) + "@example.com");
    c.CallToolOk(
        "create_contact",
        {{"email", emails.back()}, {"first_name", "P" + std::to_string(i)}, {"lists", {list_id}}});
  }
  auto campaign = c.CallToolOk("create_campaign", {{"name", "Launch"},
                                                   {"subject", "Hi"},
                                                   {"from_email", "news@example.com"},
                                                   {"text_body", "Hello"},
                                                   {"audience", {{"lists", {list_id}}}}});
  auto preview = c.CallToolOk("activate_campaign", {{"id", campaign["campaign"]["id"]}});
  EXPECT_EQ(preview["preview"]["audience_size"], 7);
  const json& sample = preview["preview"]["recipient_sample"];
  ASSERT_EQ(sample.size(), 5u);
  for (size_t i = 0; i < sample.size(); ++i) {
    EXPECT_EQ(sample[i]["email"], emails[i]);
    EXPECT_EQ(sample[i]["first_name"], "P" + std::to_string(i));
  }
}

}  // namespace
}  // namespace crmd::testing

// The console's contact pages (src/console/contact_pages.h) over real HTTP: administrators
// find a contact and open its page (profile, custom fields, lists, tags, suppression and
// the timeline with who did what through which face); audit rows about a contact link to
// it; the page's JSON download is the export document; other people get 403; stored values
// render escaped.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "src/app/services.h"
#include "tests/support/browser.h"
#include "tests/support/mcp_client.h"
#include "tests/support/tokens.h"

namespace crmd::testing {
namespace {

constexpr const char* kContactPagesPassword = "correct horse battery staple";

// A path as the templates write it in an attribute ('/' escaped as &#x2F;).
std::string InHtml(const std::string& path) {
  std::string out;
  for (char ch : path) out += ch == '/' ? std::string("&#x2F;") : std::string(1, ch);
  return out;
}

class ContactPages : public ::testing::Test {
 protected:
  ContactPages() {
    auto& users = *server_.app().services().users;
    EXPECT_TRUE(users.Create("admin@example.com", kContactPagesPassword, true));
    EXPECT_TRUE(users.Create("alice@example.com", kContactPagesPassword, false));
  }

  std::unique_ptr<Browser> SignedIn(const std::string& email) {
    auto b = std::make_unique<Browser>(server_);
    Page after = SignInToConsole(*b, email, kContactPagesPassword);
    EXPECT_EQ(after.status, 200) << after.body;
    return b;
  }

  // A contact made and unsubscribed by an assistant; answers its id.
  int64_t AssistantsContact() {
    std::string token = MintTestToken(server_, {.client_id = "assistant-a", .subject = "7"});
    McpClient a(server_, McpClientOptions{.token = token});
    EXPECT_TRUE(a.Initialize().ok());
    auto made =
        a.CallTool("create_contact", {{"email", "gwen@example.com"},
                                      {"first_name", "Gwen"},
                                      {"tags", {"vip"}},
                                      {"custom_fields", {{"note", "<script>alert(1)</script>"}}}});
    EXPECT_TRUE(made.ok() && !made.is_tool_error()) << made.raw;
    int64_t id = made.structured()["contact"].value("id", int64_t{0});
    auto moved = a.CallTool("set_contact_status", {{"id", id}, {"status", "unsubscribed"}});
    EXPECT_TRUE(moved.ok() && !moved.is_tool_error()) << moved.raw;
    return id;
  }

  TestServer server_;
};

TEST_F(ContactPages, AnAdministratorFindsAContactAndSeesItsProfileSuppressionAndTimeline) {
  int64_t id = AssistantsContact();
  const std::string page_path = "/console/contacts/" + std::to_string(id);
  auto b = SignedIn("admin@example.com");
  Page list = b->Get("/console/contacts?q=gw");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_NE(list.body.find("href=\"" + InHtml(page_path) + "\""), std::string::npos) << list.body;
  EXPECT_NE(b->Get("/console").body.find(">Contacts</a>"), std::string::npos);
  Page page = b->Get("/console/contacts?q=" + http::PercentEncode("GWEN@example.com"));
  ASSERT_EQ(page.status, 200) << page.body;  // an exact address opens the contact's page
  EXPECT_NE(page.body.find("<h1>Contact gwen@example.com</h1>"), std::string::npos) << page.body;
  EXPECT_NE(page.body.find("<dd>unsubscribed</dd>"), std::string::npos);
  EXPECT_NE(page.body.find("<li>vip <form"), std::string::npos);
  EXPECT_NE(page.body.find("Suppressed: unsubscribed"), std::string::npos);
  EXPECT_EQ(page.body.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.body.find("&lt;script&gt;alert(1)"), std::string::npos);
  EXPECT_NE(page.body.find("contact.tag_added tag vip"), std::string::npos) << page.body;
  // Never confirmed through double opt-in: no such line.
  EXPECT_EQ(page.body.find("Double opt-in confirmed"), std::string::npos);
  // The timeline: newest first, the status change with the assistant that made it.
  size_t status_change = page.body.find("set_contact_status by mcp 7 via assistant-a");
  size_t creation = page.body.find("create_contact by mcp 7 via assistant-a");
  ASSERT_NE(status_change, std::string::npos) << page.body;
  ASSERT_NE(creation, std::string::npos);
  EXPECT_LT(status_change, creation);
  EXPECT_NE(page.body.find("contact.status_updated: subscribed → unsubscribed"), std::string::npos);
  // The audit log links rows about a contact to its page.
  Page audit = b->Get("/console/audit?action=set_contact_status");
  EXPECT_NE(audit.body.find("<a href=\"" + InHtml(page_path) + "\">" + std::to_string(id) + "</a>"),
            std::string::npos)
      << audit.body;
  // The download is the export document.
  Page file = b->Get(page_path + "/export.json");
  ASSERT_EQ(file.status, 200);
  EXPECT_EQ(file.Header("Content-Type").value_or(""), "application/json");
  auto doc = nlohmann::json::parse(file.body, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << file.body;
  EXPECT_EQ(doc["contact"]["email"], "gwen@example.com");
  EXPECT_EQ(doc["status_changes"].size(), 2u);
  EXPECT_EQ(b->Get("/console/contacts/999999").status, 404);
  EXPECT_EQ(b->Get("/console/contacts/abc").status, 404);
  EXPECT_EQ(b->Get(page_path + "/other").status, 404);
  Page none = b->Get("/console/contacts?q=zz");
  EXPECT_NE(none.body.find("No contact matches."), std::string::npos);
}

TEST_F(ContactPages, OnlyAdministratorsOpenThemAndVisitorsAreSentToSignIn) {
  int64_t id = AssistantsContact();
  const std::string page_path = "/console/contacts/" + std::to_string(id);
  auto alice = SignedIn("alice@example.com");
  for (const std::string& path :
       {std::string("/console/contacts"), page_path, page_path + "/export.json"}) {
    Page page = alice->Get(path);
    EXPECT_EQ(page.status, 403) << path;
    EXPECT_EQ(page.body.find("gwen@example.com"), std::string::npos) << path;
  }
  EXPECT_EQ(alice->Get("/console").body.find(">Contacts</a>"), std::string::npos);
  Browser visitor(server_);
  visitor.set_follow_redirects(false);
  Page page = visitor.Get(page_path);
  EXPECT_EQ(page.status, 303);
  EXPECT_EQ(std::string(page.Header("Location").value_or("")),
            "/console/login?next=" + http::PercentEncode(page_path));
  auto post = server_.Send("POST", page_path, "", {});
  EXPECT_EQ(post.status, 403);
}

}  // namespace
}  // namespace crmd::testing

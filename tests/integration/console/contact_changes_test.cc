// The console's contact search filters and the changes a contact's page makes
// (src/console/contact_changes.h) over real HTTP: filters by status, list, tag, source and
// creation date with pages that keep them; the status changed through the contact book's
// state machine (a refused transition is 409 and changes nothing), lists and tags added and
// removed, each an audit row with the signed-in person as actor; CSRF required.
#include <gtest/gtest.h>

#include <string>

#include "src/app/services.h"
#include "src/crm/services.h"
#include "src/governance/audit.h"
#include "tests/support/browser.h"
#include "tests/support/mcp_client.h"
#include "tests/support/tokens.h"

namespace crmd::testing {
namespace {

constexpr const char* kContactChangesPassword = "correct horse battery staple";

class ContactChanges : public ::testing::Test {
 protected:
  ContactChanges() {
    EXPECT_TRUE(
        server_.app().services().users->Create("admin@example.com", kContactChangesPassword, true));
    std::string token = MintTestToken(server_, {.client_id = "assistant-a", .subject = "7"});
    mcp_ = std::make_unique<McpClient>(server_, McpClientOptions{.token = token});
    EXPECT_TRUE(mcp_->Initialize().ok());
    mcp_->CallToolOk("create_list", {{"name", "News"}});
    mcp_->CallToolOk("create_list", {{"name", "Offers"}});
    mcp_->CallToolOk("create_tag", {{"name", "vip"}});
    for (int i = 0; i < 60; ++i) {
      char email[40];
      std::snprintf(email, sizeof email, "p%02d@example.com", i);
      json fields = {{"email", email}, {"status", i % 2 ? "subscribed" : "pending"}};
      if (i % 3 == 0) fields["lists"] = {"News"};
      if (i % 5 == 0) fields["tags"] = {"vip"};
      mcp_->CallToolOk("create_contact", fields);
    }
    browser_ = std::make_unique<Browser>(server_);
    EXPECT_EQ(SignInToConsole(*browser_, "admin@example.com", kContactChangesPassword).status, 200);
  }

  using json = nlohmann::json;
  TestServer server_;
  std::unique_ptr<McpClient> mcp_;
  std::unique_ptr<Browser> browser_;
};

size_t ContactRows(const std::string& body) {
  size_t n = 0;
  for (size_t at = body.find("@example.com</a></td>"); at != std::string::npos;
       at = body.find("@example.com</a></td>", at + 1))
    ++n;
  return n;
}

TEST_F(ContactChanges, FiltersNarrowTheSearchAndPagesKeepThem) {
  Page all = browser_->Get("/console/contacts");
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(ContactRows(all.body), 50u);  // 50 a page
  // Subscribed (odd numbers, 30) on the list News (multiples of 3): 3, 9, ... 57 = 10.
  Page both = browser_->Get("/console/contacts?status=subscribed&list=News");
  ASSERT_EQ(both.status, 200) << both.body;
  EXPECT_EQ(ContactRows(both.body), 10u) << both.body;
  EXPECT_NE(both.body.find("p03@example.com"), std::string::npos);
  EXPECT_EQ(both.body.find("p06@example.com"), std::string::npos);
  EXPECT_NE(both.body.find("<option value=\"subscribed\" selected>"), std::string::npos);
  // The tag by name, 12 of 60.
  EXPECT_EQ(ContactRows(browser_->Get("/console/contacts?tag=vip").body), 12u);
  // Subscribed: 30, so a second page that keeps the filter.
  Page first = browser_->Get("/console/contacts?status=subscribed");
  EXPECT_EQ(ContactRows(first.body), 30u);
  Page pending = browser_->Get("/console/contacts?status=pending&q=p");
  EXPECT_EQ(ContactRows(pending.body), 30u);
  // Created today (UTC): everyone; from tomorrow: nobody.
  const std::string today = FormatRfc3339(server_.app().services().clock->NowUnix()).substr(0, 10);
  EXPECT_EQ(ContactRows(browser_->Get("/console/contacts?from=" + today + "&to=" + today).body),
            50u);
  Page none = browser_->Get("/console/contacts?from=2999-01-01");
  EXPECT_EQ(ContactRows(none.body), 0u);
  EXPECT_NE(none.body.find("No contact matches."), std::string::npos);
  // Bad input is a 400 page with the form; an unknown list 404.
  EXPECT_EQ(browser_->Get("/console/contacts?status=bogus").status, 400);
  EXPECT_EQ(browser_->Get("/console/contacts?from=yesterday").status, 400);
  Page unknown = browser_->Get("/console/contacts?list=Nope");
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  EXPECT_NE(unknown.body.find("role=\"alert\""), std::string::npos);
  // The source filter: contacts made by the assistant carry the MCP source.
  Page by_source = browser_->Get("/console/contacts?source=nowhere");
  EXPECT_EQ(ContactRows(by_source.body), 0u);
  // The next page's link keeps the filters.
  Page page1 = browser_->Get("/console/contacts?q=p");
  const std::string next_key = "<a href=\"";
  size_t at = page1.body.find("Next page");
  ASSERT_NE(at, std::string::npos);
  size_t href = page1.body.rfind(next_key, at) + next_key.size();
  std::string next = page1.body.substr(href, page1.body.find('"', href) - href);
  for (size_t i; (i = next.find("&amp;")) != std::string::npos;) next.replace(i, 5, "&");
  for (size_t i; (i = next.find("&#x2F;")) != std::string::npos;) next.replace(i, 6, "/");
  for (size_t i; (i = next.find("&#x3D;")) != std::string::npos;) next.replace(i, 6, "=");
  EXPECT_NE(next.find("q=p"), std::string::npos) << next;
  EXPECT_EQ(ContactRows(browser_->Get(next).body), 10u) << next;
}

TEST_F(ContactChanges, StatusListsAndTagsChangeThroughTheContactBooksRules) {
  auto k = server_.app().services().crm->contacts->GetByEmail("p01@example.com");
  ASSERT_TRUE(k.has_value());
  const std::string path = "/console/contacts/" + std::to_string(k->id);
  Page page = browser_->Get(path);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("Change the status from subscribed to"), std::string::npos);
  const std::string csrf = PageCsrf(page.body);

  Page added =
      browser_->PostForm(path, {{"csrf_token", csrf}, {"action", "add_list"}, {"list", "Offers"}});
  ASSERT_EQ(added.status, 200) << added.body;
  EXPECT_NE(added.body.find("Added to the list."), std::string::npos);
  EXPECT_NE(added.body.find("aria-label=\"Remove from the list Offers\""), std::string::npos);
  Page tagged =
      browser_->PostForm(path, {{"csrf_token", csrf}, {"action", "add_tag"}, {"tag", "vip"}});
  ASSERT_EQ(tagged.status, 200) << tagged.body;
  EXPECT_NE(tagged.body.find("aria-label=\"Remove the tag vip\""), std::string::npos);
  // As add_contact_tags does, a tag named for the first time is made.
  Page fresh =
      browser_->PostForm(path, {{"csrf_token", csrf}, {"action", "add_tag"}, {"tag", "new one"}});
  ASSERT_EQ(fresh.status, 200) << fresh.body;
  EXPECT_NE(fresh.body.find("aria-label=\"Remove the tag new one\""), std::string::npos);
  // A list must exist.
  EXPECT_EQ(
      browser_->PostForm(path, {{"csrf_token", csrf}, {"action", "add_list"}, {"list", "Nope"}})
          .status,
      404);

  // Unsubscribed by the person, with a reason; then back to subscribed needs consent.
  Page left = browser_->PostForm(path, {{"csrf_token", csrf},
                                        {"action", "status"},
                                        {"status", "unsubscribed"},
                                        {"reason", "asked by phone"},
                                        {"revision", PageHidden(fresh.body, "revision")}});
  ASSERT_EQ(left.status, 200) << left.body;
  EXPECT_EQ(server_.app().services().crm->contacts->Get(k->id)->status, "unsubscribed");
  Page refused = browser_->PostForm(path, {{"csrf_token", csrf},
                                           {"action", "status"},
                                           {"status", "subscribed"},
                                           {"revision", PageHidden(left.body, "revision")}});
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(server_.app().services().crm->contacts->Get(k->id)->status, "unsubscribed");
  // A stale revision is refused too.
  EXPECT_EQ(browser_
                ->PostForm(path, {{"csrf_token", csrf},
                                  {"action", "status"},
                                  {"status", "subscribed"},
                                  {"consent", "yes"},
                                  {"revision", PageHidden(page.body, "revision")}})
                .status,
            409);

  // Removing the list and the tag by their ids (the buttons).
  const size_t row = left.body.find("<td>Offers</td>");
  ASSERT_NE(row, std::string::npos) << left.body;
  const std::string offers = PageHidden(left.body.substr(row), "list");
  Page removed =
      browser_->PostForm(path, {{"csrf_token", csrf}, {"action", "remove_list"}, {"list", offers}});
  ASSERT_EQ(removed.status, 200) << removed.body;
  EXPECT_EQ(removed.body.find("aria-label=\"Remove from the list Offers\""), std::string::npos);

  // Without the CSRF token nothing happens.
  EXPECT_EQ(browser_->PostForm(path, {{"action", "add_list"}, {"list", "Offers"}}).status, 403);

  // Every change is an audit row with the person as its actor.
  auto rows = server_.app().services().governance->audit->Find(
      governance::AuditFilter{.client_id = "console"});
  ASSERT_TRUE(rows.has_value());
  std::string actions;
  for (const auto& r : *rows) {
    actions += r.entry.action + " ";
    EXPECT_EQ(r.actor.kind, "user");
    auto admin = server_.app().services().users->FindByEmail("admin@example.com");
    ASSERT_TRUE(admin && *admin);
    EXPECT_EQ(r.actor.subject, std::to_string((*admin)->id));
  }
  for (const char* a : {"add_contact_to_lists", "add_contact_tags", "set_contact_status",
                        "remove_contact_from_lists"})
    EXPECT_NE(actions.find(a), std::string::npos) << a << " in " << actions;
}

}  // namespace
}  // namespace crmd::testing

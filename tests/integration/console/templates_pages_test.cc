// The console's template editor (src/console/templates_pages.h) over real HTTP, as a
// person uses it: the list, a new template, the editor with its preview rendered for a
// real contact in a sandboxed frame (the saved template, and what is typed before saving),
// saving with the revision read (a stale one refused, what was typed kept), a bad merge
// tag refused, CSRF required, deletion.
#include <gtest/gtest.h>

#include <string>

#include "src/app/services.h"
#include "src/marketing/services.h"
#include "tests/support/browser.h"
#include "tests/support/mcp_client.h"
#include "tests/support/tokens.h"

namespace crmd::testing {
namespace {

constexpr const char* kTemplatesPassword = "correct horse battery staple";

class TemplatePages : public ::testing::Test {
 protected:
  TemplatePages() {
    EXPECT_TRUE(
        server_.app().services().users->Create("admin@example.com", kTemplatesPassword, true));
    std::string token = MintTestToken(server_, {.client_id = "assistant-a", .subject = "7"});
    McpClient a(server_, McpClientOptions{.token = token});
    EXPECT_TRUE(a.Initialize().ok());
    auto made = a.CallTool("create_contact", {{"email", "ada@example.com"}, {"first_name", "Ada"}});
    EXPECT_TRUE(made.ok() && !made.is_tool_error()) << made.raw;
    browser_ = std::make_unique<Browser>(server_);
    Page after = SignInToConsole(*browser_, "admin@example.com", kTemplatesPassword);
    EXPECT_EQ(after.status, 200) << after.body;
  }

  std::string Csrf() {
    auto form = browser_->Get("/console/templates/edit?id=1").form();
    EXPECT_TRUE(form.has_value());
    return form ? form->Value("csrf_token").value_or("") : "";
  }

  TestServer server_;
  std::unique_ptr<Browser> browser_;
};

TEST_F(TemplatePages, MakeEditPreviewAndSaveATemplate) {
  Page list = browser_->Get("/console/templates");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_NE(list.body.find(">Templates</a>"), std::string::npos);  // in the navigation
  EXPECT_NE(list.body.find("Default</a> (built in)"), std::string::npos) << list.body;

  const std::string csrf = Csrf();
  Page made =
      browser_->PostForm("/console/templates", {{"csrf_token", csrf},
                                                {"action", "create"},
                                                {"name", "Frame"},
                                                {"html", "<div class=\"frame\">{{content}}</div>"},
                                                {"text", ""}});
  ASSERT_EQ(made.status, 200) << made.body;
  EXPECT_NE(made.body.find("<h1>Template: Frame</h1>"), std::string::npos) << made.body;
  const std::string id = QueryParams(made.url)["id"];
  ASSERT_FALSE(id.empty()) << made.url;

  // The editor: the console's policy plus frames from this site; the preview in a sandbox.
  const std::string csp = made.Header("Content-Security-Policy").value_or("");
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(made.body.find("<iframe name=\"template-preview\""), std::string::npos);
  EXPECT_NE(made.body.find(" sandbox src="), std::string::npos);

  // The saved template rendered for the first contact: the layout around the sample body.
  Page preview = browser_->Get("/console/templates/preview?id=" + id);
  ASSERT_EQ(preview.status, 200) << preview.body;
  EXPECT_NE(preview.body.find("<div class=\"frame\"><h2>Your message goes here</h2><p>Hello Ada,"),
            std::string::npos)
      << preview.body;
  const std::string preview_csp = preview.Header("Content-Security-Policy").value_or("");
  EXPECT_NE(preview_csp.find("sandbox"), std::string::npos) << preview_csp;
  EXPECT_NE(preview_csp.find("frame-ancestors 'self'"), std::string::npos) << preview_csp;
  EXPECT_EQ(preview.Header("X-Frame-Options").value_or(""), "SAMEORIGIN");
  EXPECT_EQ(
      browser_->Get("/console/templates/preview?id=" + id + "&contact=nobody%40example.com").status,
      404);

  // What is typed, before saving (the Preview button posts the editor into the frame).
  auto editor = made.form();
  ASSERT_TRUE(editor.has_value()) << made.body;
  EXPECT_EQ(editor->Value("revision").value_or(""), "1");
  editor->Set("html",
              "<section>{{content}}<p>{{company_address | \"no address yet\"}}</p></section>");
  editor->Set("text", "");
  editor->Set("name", "Frame 2");
  Form typed = *editor;
  typed.action = server_.base_url() + "/console/templates/preview";
  Page live = browser_->Submit(typed);
  ASSERT_EQ(live.status, 200) << live.body;
  EXPECT_NE(live.body.find("<section><h2>Your message goes here</h2><p>Hello Ada,"),
            std::string::npos)
      << live.body;
  EXPECT_NE(live.body.find("no address yet"), std::string::npos);

  // Saved at the revision read.
  Page saved = browser_->Submit(*editor, std::make_pair("action", "save"));
  ASSERT_EQ(saved.status, 200) << saved.body;
  EXPECT_NE(saved.body.find("<h1>Template: Frame 2</h1>"), std::string::npos) << saved.body;
  EXPECT_EQ(saved.form()->Value("revision").value_or(""), "2");
  auto stored = server_.app().services().marketing->templates->Get(std::stoll(id));
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->html,
            "<section>{{content}}<p>{{company_address | \"no address yet\"}}</p></section>");

  // The same form again (revision 1): refused, what was typed kept.
  editor->Set("name", "Frame 3");
  Page stale = browser_->Submit(*editor, std::make_pair("action", "save"));
  EXPECT_EQ(stale.status, 409) << stale.body;
  EXPECT_NE(stale.body.find("Someone changed this template"), std::string::npos) << stale.body;
  EXPECT_NE(stale.body.find("value=\"Frame 3\""), std::string::npos);
  EXPECT_EQ(server_.app().services().marketing->templates->Get(std::stoll(id))->name, "Frame 2");

  // A bad merge tag: refused, nothing saved.
  auto fresh = saved.form();
  fresh->Set("html", "<p>{{content}} {{frist_name}}</p>");
  fresh->Set("text", "");
  Page bad = browser_->Submit(*fresh, std::make_pair("action", "save"));
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.body.find("unknown merge tag &quot;frist_name&quot;"), std::string::npos)
      << bad.body;
  EXPECT_EQ(server_.app().services().marketing->templates->Get(std::stoll(id))->revision, 2);

  // Without the session's CSRF token nothing happens.
  fresh->Set("html", "<p>{{content}}</p>");
  fresh->Remove("csrf_token");
  EXPECT_EQ(browser_->Submit(*fresh, std::make_pair("action", "save")).status, 403);
  EXPECT_EQ(server_.app().services().marketing->templates->Get(std::stoll(id))->revision, 2);

  Page deleted = browser_->PostForm("/console/templates",
                                    {{"csrf_token", csrf}, {"action", "delete"}, {"id", id}});
  EXPECT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.body.find("Frame 2"), std::string::npos);
  EXPECT_EQ(browser_->Get("/console/templates/edit?id=" + id).status, 404);
}

}  // namespace
}  // namespace crmd::testing

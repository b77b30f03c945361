// The Forms page's visual builder (src/console/form_builder.h) over real HTTP: rows added,
// moved and removed by the builder's buttons without saving anything, the preview of the
// form as a visitor sees it (in the page, and as the fragment console.js fetches), and a
// refused definition's errors shown beside their rows; the CSRF token is required.
#include <gtest/gtest.h>

#include <string>

#include "src/app/services.h"
#include "src/crm/services.h"
#include "tests/support/browser.h"

namespace crmd::testing {
namespace {

constexpr const char* kBuilderPassword = "correct horse battery staple";

size_t RowCount(const std::string& body) {
  size_t n = 0;
  for (size_t at = body.find("class=\"field-row"); at != std::string::npos;
       at = body.find("class=\"field-row", at + 1))
    ++n;
  return n;
}

class FormBuilder : public ::testing::Test {
 protected:
  FormBuilder() {
    EXPECT_TRUE(
        server_.app().services().users->Create("admin@example.com", kBuilderPassword, true));
    browser_ = std::make_unique<Browser>(server_);
    EXPECT_EQ(SignInToConsole(*browser_, "admin@example.com", kBuilderPassword).status, 200);
  }

  size_t Forms() {
    auto list = server_.app().services().crm->forms->List();
    return list ? list->size() : 999;
  }

  TestServer server_;
  std::unique_ptr<Browser> browser_;
};

TEST_F(FormBuilder, ButtonsAddMoveAndRemoveRowsAndThePreviewFollows) {
  Page fresh = browser_->Get("/console/forms");
  ASSERT_EQ(fresh.status, 200) << fresh.body;
  EXPECT_EQ(RowCount(fresh.body), 2u);  // the Email field and an empty row
  EXPECT_NE(fresh.body.find("<label for=\"preview-field-0\">Email *</label>"), std::string::npos)
      << fresh.body;
  const std::string csrf = PageCsrf(fresh.body);
  std::vector<std::pair<std::string, std::string>> form = {
      {"csrf_token", csrf},   {"name", "Signup"},       {"f0_type", "Email"},
      {"f0_name", "email"},   {"f0_label", "Email"},    {"f0_required", "on"},
      {"f1_type", "Heading"}, {"f1_label", "Join <us>"}};
  auto with = [&](std::string key, std::string value) {
    auto f = form;
    f.emplace_back(std::move(key), std::move(value));
    return f;
  };
  Page added = browser_->PostForm("/console/forms", with("builder", "add"));
  ASSERT_EQ(added.status, 200) << added.body;
  EXPECT_EQ(RowCount(added.body), 3u);
  EXPECT_NE(added.body.find("<h3>Join &lt;us&gt;</h3>"), std::string::npos);  // the preview
  // Up on the heading: it comes first, in the rows and in the preview.
  Page moved = browser_->PostForm("/console/forms", with("builder", "up:1"));
  ASSERT_EQ(moved.status, 200) << moved.body;
  EXPECT_LT(moved.body.find("value=\"Join &lt;us&gt;\""), moved.body.find("value=\"email\""));
  EXPECT_LT(moved.body.find("<h3>Join"), moved.body.find("preview-field-1\">Email"));
  Page removed = browser_->PostForm("/console/forms", with("builder", "remove:1"));
  EXPECT_EQ(RowCount(removed.body), 1u);
  EXPECT_EQ(removed.body.find("value=\"Join"), std::string::npos);
  EXPECT_EQ(browser_->PostForm("/console/forms", with("builder", "remove:9")).status, 400);
  EXPECT_EQ(Forms(), 0u);  // the buttons save nothing

  // The fragment console.js fetches while the person types.
  Page fragment = browser_->PostForm("/console/forms/preview", form);
  ASSERT_EQ(fragment.status, 200) << fragment.body;
  EXPECT_NE(fragment.body.find("<h3>Join &lt;us&gt;</h3>"), std::string::npos);
  EXPECT_NE(fragment.body.find("<label for=\"preview-field-0\">Email *</label>"),
            std::string::npos);
  EXPECT_EQ(fragment.body.find("<script"), std::string::npos);
  auto forged = form;
  forged.erase(forged.begin());
  EXPECT_EQ(browser_->PostForm("/console/forms/preview", forged).status, 403);
}

TEST_F(FormBuilder, EachFieldsErrorStandsBesideItsRow) {
  Page fresh = browser_->Get("/console/forms");
  Page refused = browser_->PostForm("/console/forms", {{"csrf_token", PageCsrf(fresh.body)},
                                                       {"action", "create"},
                                                       {"name", "Two emails"},
                                                       {"f0_type", "Email"},
                                                       {"f0_name", "email"},
                                                       {"f1_type", "Input"},
                                                       {"f1_name", "email"},
                                                       {"f1_label", "Nick"}});
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("id=\"f1_error\" role=\"alert\""), std::string::npos) << refused.body;
  EXPECT_EQ(refused.body.find("id=\"f0_error\""), std::string::npos);
  EXPECT_NE(refused.body.find("aria-describedby=\"f1_error\""), std::string::npos);
  EXPECT_NE(refused.body.find("another field has this name"), std::string::npos);
  EXPECT_NE(refused.body.find("value=\"Nick\""), std::string::npos);  // kept
  EXPECT_EQ(Forms(), 0u);
}

}  // namespace
}  // namespace crmd::testing

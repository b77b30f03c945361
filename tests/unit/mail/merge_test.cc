#include "src/mail/merge.h"

#include <gtest/gtest.h>

namespace crmd::mail {
namespace {

TEST(MergeTemplate, RendersValuesAndFallbacks) {
  auto t = MergeTemplate::Parse("Hi {{first_name | \"there\"}}, your email is {{ email }}.");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->RenderText({{"first_name", "Ada"}, {"email", "ada@example.com"}}),
            "Hi Ada, your email is ada@example.com.");
  EXPECT_EQ(t->RenderText({{"email", "x@example.com"}}), "Hi there, your email is x@example.com.");
  EXPECT_EQ(t->RenderText({{"first_name", ""}}), "Hi there, your email is .");
  ASSERT_EQ(t->tags().size(), 2u);
  EXPECT_EQ(t->tags()[0].name, "first_name");
  EXPECT_EQ(t->tags()[0].fallback, "there");
  EXPECT_FALSE(t->tags()[1].fallback.has_value());
}

TEST(MergeTemplate, CustomFieldsByKey) {
  auto t = MergeTemplate::Parse("Plan: {{custom.plan | \"free\"}} / {{custom.seat-count}}");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->RenderText({{"custom.plan", "pro"}, {"custom.seat-count", "3"}}), "Plan: pro / 3");
  EXPECT_EQ(t->RenderText({}), "Plan: free / ");
}

TEST(MergeTemplate, HtmlPartEscapesValuesTextPartDoesNot) {
  auto t = MergeTemplate::Parse("<a href=\"{{unsubscribe_url}}\">{{first_name}}</a>");
  ASSERT_TRUE(t.has_value());
  MergeValues v = {{"first_name", "<script>alert('x')</script> & \"co\""},
                   {"unsubscribe_url", "https://a.example/u?t=1&x=\"y"}};
  EXPECT_EQ(t->RenderHtml(v),
            "<a href=\"https://a.example/u?t=1&amp;x=&quot;y\">&lt;script&gt;alert(&#39;x&#39;)"
            "&lt;/script&gt; &amp; &quot;co&quot;</a>");
  EXPECT_EQ(t->RenderText(v),
            "<a href=\"https://a.example/u?t=1&x=\"y\"><script>alert('x')</script> & \"co\"</a>");
}

TEST(MergeTemplate, FallbackIsEscapedInHtmlAndMayHoldQuotes) {
  auto t = MergeTemplate::Parse(R"({{first_name | "dear \"friend\" & co"}})");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->RenderText({}), "dear \"friend\" & co");
  EXPECT_EQ(t->RenderHtml({}), "dear &quot;friend&quot; &amp; co");
}

TEST(MergeTemplate, UnknownTagIsAValidationErrorNamingTagAndPosition) {
  auto t = MergeTemplate::Parse("Hello,\n  dear {{frist_name}}!");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code, Errc::kInvalidArgument);
  EXPECT_NE(t.error().message.find("unknown merge tag \"frist_name\" at line 2, column 8"),
            std::string::npos)
      << t.error().message;
  EXPECT_NE(t.error().message.find("first_name"), std::string::npos);  // lists the known ones
}

TEST(MergeTemplate, MalformedTagsAreValidationErrors) {
  for (const char* src : {"{{}}", "{{ first_name", "{{first name}}", "{{first_name | there}}",
                          "{{first_name | \"there}}", "{{custom.}}", "{{custom.a b}}",
                          "{{email}} and {{ email | \"x\" junk }}"}) {
    auto t = MergeTemplate::Parse(src);
    EXPECT_FALSE(t.has_value()) << src;
    if (!t) {
      EXPECT_EQ(t.error().code, Errc::kInvalidArgument);
    }
  }
  auto t = MergeTemplate::Parse("ok {{email}}\n{{ first_name");
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().message.find("unclosed merge tag at line 2, column 1"), std::string::npos)
      << t.error().message;
}

TEST(MergeTemplate, SchemaDecidesWhatIsKnown) {
  MergeSchema schema{.fields = {"company"}, .custom_fields = false};
  EXPECT_TRUE(MergeTemplate::Parse("{{company}}", schema).has_value());
  EXPECT_FALSE(MergeTemplate::Parse("{{email}}", schema).has_value());
  EXPECT_FALSE(MergeTemplate::Parse("{{custom.x}}", schema).has_value());
}

TEST(MergeTemplate, TextWithoutTagsAndSingleBracesIsLiteral) {
  auto t = MergeTemplate::Parse("a { b } c }} d");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->RenderHtml({}), "a { b } c }} d");
  EXPECT_TRUE(t->tags().empty());
}

}  // namespace
}  // namespace crmd::mail

#include "src/mail/merge.h"

#include <gtest/gtest.h>

#include "src/mail/message.h"

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

TEST(MergeTemplate, UrlAttributesTakeOnlyWebAndMailValues) {
  auto t = MergeTemplate::Parse(
      "<a class=x href=\"{{custom.site}}\">{{custom.site}}</a><img src='{{custom.site | "
      "\"https://a.example/logo.png\"}}'><a HREF={{custom.site}}>x</a>");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  for (const char* bad : {"javascript:alert(1)", " JavaScript:alert(1)", "java\tscript:x",
                          "\x01javascript:x", "data:text/html,x", "vbscript:x", "/relative"}) {
    std::string html = t->RenderHtml({{"custom.site", bad}});
    EXPECT_EQ(html.find("href=\"" + HtmlEscape(bad)), std::string::npos) << bad << ": " << html;
    EXPECT_EQ(html.find("HREF=" + HtmlEscape(bad)), std::string::npos) << bad << ": " << html;
    EXPECT_NE(html.find("src='https://a.example/logo.png'"), std::string::npos) << html;
    EXPECT_NE(html.find(">" + HtmlEscape(bad) + "</a>"), std::string::npos) << html;  // text
  }
  for (const char* good : {"https://x.example/", "HTTP://x.example", "mailto:a@x.example"}) {
    std::string html = t->RenderHtml({{"custom.site", good}});
    EXPECT_NE(html.find("href=\"" + std::string(good) + "\""), std::string::npos) << html;
    EXPECT_NE(html.find("src='" + std::string(good) + "'"), std::string::npos) << html;
  }
  // Text parts are not HTML: values go in as they are.
  EXPECT_NE(t->RenderText({{"custom.site", "javascript:x"}}).find("href=\"javascript:x\""),
            std::string::npos);
}

TEST(MergeTemplate, AUrlWhoseSchemeTheTemplateFixesTakesAnyValue) {
  auto t = MergeTemplate::Parse(
      "<a href=\"https://shop.example/?ref={{custom.ref}}\">a</a>"
      "<a href=\"{{custom.a}}{{custom.b}}\">b</a><p title=\"{{custom.ref}}\">c</p>");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  std::vector<MergeSpan> filled;
  std::string html = t->RenderHtml(
      {{"custom.ref", "javascript:x"}, {"custom.a", "https://a.example"}, {"custom.b", "/p"}},
      &filled);
  EXPECT_NE(html.find("ref=javascript:x\""), std::string::npos) << html;
  EXPECT_NE(html.find("title=\"javascript:x\""), std::string::npos) << html;  // not a URL
  // After another tag the scheme is still open: the second value must stand on its own.
  EXPECT_NE(html.find("href=\"https://a.example\">b"), std::string::npos) << html;
  // The filled ranges are those inside URL attributes, not the title.
  ASSERT_EQ(filled.size(), 2u);
  EXPECT_EQ(html.substr(filled[0].begin, filled[0].end - filled[0].begin), "javascript:x");
  EXPECT_EQ(html.substr(filled[1].begin, filled[1].end - filled[1].begin), "https://a.example");
}

TEST(MergeTemplate, SafeLinkUrlsAreWebAndMailOnly) {
  EXPECT_TRUE(IsSafeLinkUrl("https://a.example"));
  EXPECT_TRUE(IsSafeLinkUrl("  http://a.example"));
  EXPECT_TRUE(IsSafeLinkUrl("MailTo:a@b.example"));
  EXPECT_TRUE(IsSafeLinkUrl("ht\ntps://a.example"));  // as a browser reads it
  EXPECT_FALSE(IsSafeLinkUrl("javascript:alert(1)"));
  EXPECT_FALSE(IsSafeLinkUrl("jav\ta\nscript:alert(1)"));
  EXPECT_FALSE(IsSafeLinkUrl("data:text/html;base64,AAAA"));
  EXPECT_FALSE(IsSafeLinkUrl("//evil.example"));
  EXPECT_FALSE(IsSafeLinkUrl(""));
}

}  // namespace
}  // namespace crmd::mail

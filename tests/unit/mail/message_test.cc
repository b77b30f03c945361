#include "src/mail/message.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/fake_clock.h"
#include "tests/unit/mail/python.h"

namespace crmd::mail {
namespace {

using testing::RunPython;
using testing::TempDir;

// Parses a message with Python's email package (policy.default) and reports what a mail
// client would see, plus RFC 2047 decoding of the raw Subject with decode_header.
constexpr const char* kParse = R"PY(
import email, json, re, sys
from email import policy
from email.header import decode_header
raw = open(sys.argv[1], 'rb').read()
msg = email.message_from_bytes(raw, policy=policy.default)
old = email.message_from_bytes(raw)  # compat32: raw header values
def decoded(value):
    value = re.sub(r'\r?\n(?=[ \t])', '', value)
    return ''.join(b.decode(c or 'ascii') if isinstance(b, bytes) else b
                   for b, c in decode_header(value))
parts = []
for part in msg.walk():
    if part.is_multipart():
        continue
    parts.append({'type': part.get_content_type(), 'charset': part.get_content_charset(),
                  'cte': part['Content-Transfer-Encoding'], 'content': part.get_content().replace('\r\n', '\n'),
                  'defects': [str(d) for d in part.defects]})
lines = raw.split(b'\r\n')
print(json.dumps({
    'type': msg.get_content_type(), 'parts': parts,
    'defects': [str(d) for d in msg.defects],
    'subject': str(msg['subject']), 'subject_decode_header': decoded(old['Subject']),
    'from_name': msg['from'].addresses[0].display_name,
    'from_addr': msg['from'].addresses[0].addr_spec,
    'to_name': msg['to'].addresses[0].display_name,
    'to_addr': msg['to'].addresses[0].addr_spec,
    'date': str(msg['date']), 'message_id': str(msg['message-id']),
    'mime_version': str(msg['mime-version']),
    'list_unsubscribe': str(msg['list-unsubscribe']),
    'list_unsubscribe_post': str(msg['list-unsubscribe-post']),
    'max_line': max(len(l) for l in lines),
    'bare_lf': b'\n' in raw.replace(b'\r\n', b''),
}))
)PY";

nlohmann::json Parse(const std::string& message) {
  TempDir dir;
  auto run = RunPython(kParse, {dir.Write("m.eml", message)});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  return nlohmann::json::parse(run.output, nullptr, false);
}

Message Sample() {
  return {
      .from = {.name = "Acme News", .address = "news@acme.example"},
      .to = {.name = "Ada Lovelace", .address = "ada@example.com"},
      .subject = "Hello Ada",
      .html =
          "<html><head><title>x</title></head><body><p>Hi <b>Ada</b>,</p>"
          "<p>Read <a href=\"https://acme.example/post?a=1&amp;b=2\">our post</a>.</p>"
          "</body></html>",
      .preheader = "A short preview",
      .message_id = MakeMessageId("campaign-7", "ada@example.com", "acme.example"),
      .list_unsubscribe = {"https://acme.example/u/tok", "mailto:unsub@acme.example?subject=tok"},
      .one_click_unsubscribe = true};
}

TEST(RenderMessage, IsMultipartAlternativeWithTextThenHtml_Rfc2046_5_1_4) {
  FakeClock clock(1'764'038'000);  // 2025-11-25 02:33:20 UTC, a Tuesday
  auto m = RenderMessage(Sample(), clock);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  auto j = Parse(*m);
  EXPECT_EQ(j["type"], "multipart/alternative");
  EXPECT_TRUE(j["defects"].empty()) << j.dump();
  ASSERT_EQ(j["parts"].size(), 2u);
  EXPECT_EQ(j["parts"][0]["type"], "text/plain");
  EXPECT_EQ(j["parts"][1]["type"], "text/html");
  for (const auto& p : j["parts"]) {
    EXPECT_EQ(p["charset"], "utf-8");
    EXPECT_EQ(p["cte"], "quoted-printable");
    EXPECT_TRUE(p["defects"].empty()) << p.dump();
  }
  EXPECT_EQ(j["parts"][0]["content"],
            "Hi Ada,\n\nRead our post (https://acme.example/post?a=1&b=2).\n");
  std::string html = j["parts"][1]["content"];
  EXPECT_NE(html.find("<p>Hi <b>Ada</b>,</p>"), std::string::npos) << html;
  EXPECT_EQ(j["subject"], "Hello Ada");
  EXPECT_EQ(j["from_name"], "Acme News");
  EXPECT_EQ(j["from_addr"], "news@acme.example");
  EXPECT_EQ(j["to_addr"], "ada@example.com");
  EXPECT_EQ(j["mime_version"], "1.0");
  EXPECT_EQ(j["date"], "Tue, 25 Nov 2025 02:33:20 +0000");
  EXPECT_EQ(j["message_id"], Sample().message_id);
  EXPECT_FALSE(j["bare_lf"]);
  EXPECT_LE(j["max_line"], 76);
}

TEST(RenderMessage, CarriesListUnsubscribeAndOneClickPost_Rfc8058_3_1) {
  FakeClock clock;
  auto j = Parse(*RenderMessage(Sample(), clock));
  EXPECT_EQ(j["list_unsubscribe"],
            "<https://acme.example/u/tok>, <mailto:unsub@acme.example?subject=tok>");
  EXPECT_EQ(j["list_unsubscribe_post"], "List-Unsubscribe=One-Click");
}

TEST(RenderMessage, OneClickNeedsAnHttpsUri_Rfc8058_3_1) {
  FakeClock clock;
  Message m = Sample();
  m.list_unsubscribe = {"mailto:unsub@acme.example"};
  EXPECT_FALSE(RenderMessage(m, clock).has_value());
  m.one_click_unsubscribe = false;
  EXPECT_TRUE(RenderMessage(m, clock).has_value());
}

TEST(RenderMessage, PreheaderIsTheHiddenFirstElementOfTheBody) {
  FakeClock clock;
  auto j = Parse(*RenderMessage(Sample(), clock));
  std::string html = j["parts"][1]["content"];
  size_t body = html.find("<body>");
  size_t pre = html.find("A short preview");
  ASSERT_NE(pre, std::string::npos);
  EXPECT_EQ(html.find("<div style=\"display:none;", body), body + 6);
  EXPECT_LT(pre, html.find("<p>Hi"));
  // Not in the derived text part.
  EXPECT_EQ(std::string(j["parts"][0]["content"]).find("preview"), std::string::npos);
}

TEST(RenderMessage, GivenTextPartIsUsedAsIs) {
  FakeClock clock;
  Message m = Sample();
  m.text = "Plain words\nsecond line";
  auto j = Parse(*RenderMessage(m, clock));
  EXPECT_EQ(j["parts"][0]["content"], "Plain words\nsecond line\n");
}

TEST(RenderMessage, NonAsciiSubjectAndNamesRoundTrip_Rfc2047) {
  FakeClock clock;
  const std::string subjects[] = {
      "Grüße aus Köln — Ihre Bestellung ist unterwegs",
      "日本語の件名はここにあります。とても長い件名なので、折り返しが必要になります。",
      "Emoji 🎉🎉🎉 party time with a rather long tail of words after it all",
      "Ελληνικά",
      "A plain ASCII subject that is long enough to need folding at some space in it",
      "Looks =?encoded?= but is not",
  };
  for (const std::string& subject : subjects) {
    Message m = Sample();
    m.subject = subject;
    m.from.name = "Société Générale 🏦";
    m.to.name = "Zoë O'Brien, Jr.";
    auto rendered = RenderMessage(m, clock);
    ASSERT_TRUE(rendered.has_value());
    auto j = Parse(*rendered);
    EXPECT_EQ(j["subject"], subject);
    EXPECT_EQ(j["subject_decode_header"], subject);
    EXPECT_EQ(j["from_name"], "Société Générale 🏦");
    EXPECT_EQ(j["to_name"], "Zoë O'Brien, Jr.");
    EXPECT_LE(j["max_line"], 76) << *rendered;
    EXPECT_TRUE(j["defects"].empty()) << j.dump();
  }
}

TEST(RenderMessage, Utf8BodyWithLongLinesStaysWithin76Columns_Rfc2045_6_7) {
  FakeClock clock;
  Message m = Sample();
  std::string para(300, 'x');
  m.html = "<p>" + para + " é ü 😀 = trailing   \n.leading dot\nFrom the start</p>";
  m.text = "Ünïcödé " + para + " tail \n.dot line\nFrom here\n\ttab ";
  auto rendered = RenderMessage(m, clock);
  ASSERT_TRUE(rendered.has_value());
  auto j = Parse(*rendered);
  EXPECT_LE(j["max_line"], 76);
  EXPECT_EQ(j["parts"][0]["content"], *m.text + "\n");
  EXPECT_NE(std::string(j["parts"][1]["content"]).find(para + " é ü 😀 = trailing"),
            std::string::npos);
  // No body line begins with "." or "From ", so no transport needs to alter it.
  EXPECT_EQ(rendered->find("\r\n."), std::string::npos);
  EXPECT_EQ(rendered->find("\r\nFrom "), std::string::npos);
}

TEST(RenderMessage, AnInternationalizedAddressIsWrittenAsItIsAndOnlyWellFormedUtf8_Rfc6532_3_2) {
  FakeClock clock;
  Message m = Sample();
  m.to.address = "\xe5\x8f\xb0\xe5\x8c\x97@example.com";  // 台北@example.com
  auto ok = RenderMessage(m, clock);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_NE(ok->find("<" + m.to.address + ">\r\n"), std::string::npos) << *ok;
  for (const char* bad : {"zo\xeb@example.com",          // Latin-1, not UTF-8
                          "zo\xc3@example.com",          // cut short
                          "\xed\xa0\x80@example.com",    // a surrogate
                          "zo\xc3\xab @example.com"}) {  // a space is never allowed
    m.to.address = bad;
    EXPECT_FALSE(RenderMessage(m, clock).has_value()) << bad;
  }
  m = Sample();
  m.message_id = "<\xc3\xab@acme.example>";  // a Message-ID stays ASCII
  EXPECT_FALSE(RenderMessage(m, clock).has_value());
}

TEST(RenderMessage, RejectsHeaderInjection) {
  FakeClock clock;
  Message m = Sample();
  m.subject = "Hi\r\nBcc: victim@example.com";
  EXPECT_FALSE(RenderMessage(m, clock).has_value());
  m = Sample();
  m.to.name = "x\nBcc: y@example.com";
  EXPECT_FALSE(RenderMessage(m, clock).has_value());
  m = Sample();
  m.to.address = "a@example.com>, <b@example.com";
  EXPECT_FALSE(RenderMessage(m, clock).has_value());
  m = Sample();
  m.extra_headers = {{"X-Campaign", "7\r\nBcc: z@example.com"}};
  EXPECT_FALSE(RenderMessage(m, clock).has_value());
  m = Sample();
  m.list_unsubscribe = {"https://a.example/>\r\nBcc: z@example.com"};
  EXPECT_FALSE(RenderMessage(m, clock).has_value());
  m = Sample();
  m.extra_headers = {{"bcc", "z@example.com"}};
  EXPECT_FALSE(RenderMessage(m, clock).has_value());
  m = Sample();
  m.message_id = "no-brackets@acme.example";
  EXPECT_FALSE(RenderMessage(m, clock).has_value());
  m = Sample();
  m.extra_headers = {{"X-Campaign-ID", "7"}, {"Feedback-ID", "7:campaign:acme"}};
  auto ok = RenderMessage(m, clock);
  ASSERT_TRUE(ok.has_value());
  EXPECT_NE(ok->find("\r\nX-Campaign-ID: 7\r\nFeedback-ID: 7:campaign:acme\r\n"),
            std::string::npos);
}

TEST(MessageId, IsStablePerSendAndRecipient_Rfc5322_3_6_4) {
  std::string a = MakeMessageId("send-1", "Ada@Example.com", "acme.example");
  EXPECT_EQ(a, MakeMessageId("send-1", "ada@example.com", "acme.example"));
  EXPECT_NE(a, MakeMessageId("send-2", "ada@example.com", "acme.example"));
  EXPECT_NE(a, MakeMessageId("send-1", "bob@example.com", "acme.example"));
  EXPECT_EQ(a.size(), 1 + 32 + 1 + std::string("acme.example").size() + 1);
  EXPECT_EQ(a.front(), '<');
  EXPECT_EQ(a.substr(33), "@acme.example>");
}

TEST(Date, IsRfc5322InUtc_Rfc5322_3_3) {
  EXPECT_EQ(FormatRfc5322Date(0), "Thu, 01 Jan 1970 00:00:00 +0000");
  EXPECT_EQ(FormatRfc5322Date(1'772'323'199), "Sat, 28 Feb 2026 23:59:59 +0000");
}

TEST(EncodeHeaderText, FoldsEncodedWordsWithoutSplittingCharacters_Rfc2047_5) {
  std::string s = EncodeHeaderText(std::string(40, 'a') + "é" + std::string(40, 'b'), 7);
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find("\r\n", start);
    if (end == std::string::npos) end = s.size();
    EXPECT_LE(end - start + (start == 0 ? 9 : 0), 76u) << s;
    start = end + 2;
  }
  EXPECT_EQ(s.rfind("=?UTF-8?B?", 0), 0u);
}

TEST(QuotedPrintable, EncodesEqualsTrailingSpaceAndHighBytes_Rfc2045_6_7) {
  EXPECT_EQ(QuotedPrintable("a=b"), "a=3Db");
  EXPECT_EQ(QuotedPrintable("end \nnext"), "end=20\r\nnext");
  EXPECT_EQ(QuotedPrintable("é"), "=C3=A9");
  EXPECT_EQ(QuotedPrintable(".x\r\nFrom y"), "=2Ex\r\n=46rom y");
  std::string line = QuotedPrintable(std::string(200, 'z'));
  EXPECT_EQ(line.substr(75, 3), "=\r\n");
}

TEST(HtmlToText, KeepsLinksDecodesEntitiesAndCollapsesWhitespace) {
  EXPECT_EQ(HtmlToText("<p>Hello   <b>world</b>\n\n  again</p>"), "Hello world again");
  EXPECT_EQ(HtmlToText("<a href=\"https://x.example/a?b=1&amp;c=2\">Click</a>"),
            "Click (https://x.example/a?b=1&c=2)");
  EXPECT_EQ(HtmlToText("<a href='https://x.example/'>https://x.example/</a>"),
            "https://x.example/");
  EXPECT_EQ(HtmlToText("<a href=\"mailto:a@b.example\">a@b.example</a>"), "a@b.example");
  EXPECT_EQ(HtmlToText("Fish &amp; chips &lt;3 &#233;&#xE9; &euro;&nbsp;5 &bogus;"),
            "Fish & chips <3 éé € 5 &bogus;");
  EXPECT_EQ(HtmlToText("<style>p{color:red}</style><script>x()</script><p>A</p><p>B</p>"),
            "A\n\nB");
  EXPECT_EQ(HtmlToText("one<br>two<br/>three"), "one\ntwo\nthree");
  EXPECT_EQ(HtmlToText("<ul><li>x</li><li>y</li></ul>"), "- x\n- y");
  EXPECT_EQ(HtmlToText("<!-- hidden --><h1>Title</h1>Body"), "Title\n\nBody");
  EXPECT_EQ(HtmlToText("a < b and <img alt=\"logo\" src=x>"), "a < b and logo");
  EXPECT_EQ(HtmlToText("<table><tr><td>a</td><td>b</td></tr></table>"), "a b");
}

}  // namespace
}  // namespace crmd::mail

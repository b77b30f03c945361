// Random inputs (fixed seed): the parsers and encoders never crash, never loop, and keep
// their invariants.
#include <gtest/gtest.h>

#include <random>

#include "src/mail/merge.h"
#include "src/mail/message.h"
#include "tests/support/fake_clock.h"

namespace crmd::mail {
namespace {

std::string RandomText(std::mt19937& rng, size_t max_len) {
  static constexpr std::string_view kAlphabet[] = {
      "a",       "b",        " ",         "  ",    "\n",
      "\r\n",    "\t",       "<",         ">",     "&",
      ";",       "#",        "=",         ".",     "From ",
      "{{",      "}}",       "|",         "\"",    "\\",
      "é",       "😀",        "<p>",       "</p>",  "<a href=\"x\">",
      "</a>",    "<br>",     "&amp;",     "&#",    "<!--",
      "-->",     "<script>", "</script>", "email", "first_name",
      "custom.", "\xff",     "\xc3"};
  std::uniform_int_distribution<size_t> len(0, max_len);
  std::uniform_int_distribution<size_t> pick(0, std::size(kAlphabet) - 1);
  std::string out;
  for (size_t n = len(rng); n > 0; --n) out += kAlphabet[pick(rng)];
  return out;
}

// Decodes quoted-printable; "\r\n" becomes "\n".
std::string DecodeQp(std::string_view qp) {
  std::string out;
  for (size_t i = 0; i < qp.size(); ++i) {
    if (qp[i] == '=' && qp.compare(i + 1, 2, "\r\n") == 0) {
      i += 2;
    } else if (qp[i] == '=' && i + 2 < qp.size()) {
      out += static_cast<char>(std::stoi(std::string(qp.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else if (qp[i] == '\r' && i + 1 < qp.size() && qp[i + 1] == '\n') {
      out += '\n';
      ++i;
    } else {
      out += qp[i];
    }
  }
  return out;
}

std::string WithoutCr(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;
    out += s[i];
  }
  return out;
}

TEST(Robustness, QuotedPrintableRoundTripsWithin76Columns) {
  std::mt19937 rng(20261125);
  for (int i = 0; i < 2000; ++i) {
    std::string text = RandomText(rng, 120);
    std::string qp = QuotedPrintable(text);
    EXPECT_EQ(DecodeQp(qp), WithoutCr(text)) << text;
    size_t start = 0;
    while (start <= qp.size()) {
      size_t end = qp.find("\r\n", start);
      if (end == std::string::npos) end = qp.size();
      ASSERT_LE(end - start, 76u) << text;
      ASSERT_EQ(qp.substr(start, end - start).find('\n'), std::string::npos);
      start = end + 2;
    }
  }
}

TEST(Robustness, HtmlToTextAndMergeParsingTerminateOnAnyInput) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string text = RandomText(rng, 80);
    std::string plain = HtmlToText(text);
    EXPECT_EQ(plain.find("\n\n\n"), std::string::npos);
    auto t = MergeTemplate::Parse(text);
    if (t) {
      t->RenderHtml({{"email", "<x>"}});
      t->RenderText({});
    } else {
      EXPECT_EQ(t.error().code, Errc::kInvalidArgument);
      EXPECT_NE(t.error().message.find("line"), std::string::npos) << t.error().message;
    }
  }
}

TEST(Robustness, RenderedMessagesKeepLineLimitsForAnySubjectAndBody) {
  std::mt19937 rng(99);
  FakeClock clock;
  for (int i = 0; i < 500; ++i) {
    Message m{.from = {.name = RandomText(rng, 10), .address = "a@acme.example"},
              .to = {.address = "b@example.com"},
              .subject = RandomText(rng, 40),
              .html = "<p>" + RandomText(rng, 100) + "</p>",
              .preheader = RandomText(rng, 10)};
    auto r = RenderMessage(m, clock);
    bool has_break = (m.subject + m.from.name).find_first_of("\r\n") != std::string::npos;
    ASSERT_EQ(r.has_value(), !has_break) << m.subject;
    if (!r) continue;
    size_t start = 0;
    size_t body = r->find("\r\n\r\n");
    while (start < r->size()) {
      size_t end = r->find("\r\n", start);
      ASSERT_NE(end, std::string::npos);
      // Headers may exceed 76 only where there was no space to fold at.
      ASSERT_LE(end - start, start > body ? 76u : 998u);
      ASSERT_EQ(r->substr(start, end - start).find('\n'), std::string::npos);
      start = end + 2;
    }
  }
}

}  // namespace
}  // namespace crmd::mail

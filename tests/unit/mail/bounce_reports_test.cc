// Delivery status notifications (RFC 3464) and feedback reports (RFC 5965) as they come
// back to a bounce mailbox: real-shaped samples under tests/data/bounce (Postfix's DSN,
// a delay warning, the ARF example of RFC 5965 Appendix B with a VERP return path).
#include "src/mail/bounce_reports.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace crmd::mail {
namespace {

std::string Sample(const std::string& name) {
  std::ifstream in(std::string(CRMD_SOURCE_DIR) + "/tests/data/bounce/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Crlf(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

TEST(BounceReports, PostfixFailedWith5xxIsAHardBounce_Rfc3464_2_3) {
  auto r = ParseBounceReport(Sample("postfix_dsn_hard.eml"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->kind, ProviderEventKind::kHardBounce);
  EXPECT_EQ(r->report_type, "delivery-status");
  EXPECT_EQ(r->report_id, "<20261207100001.3F2A1C0123@mx.example.net>");
  EXPECT_EQ(r->action, "failed");
  EXPECT_EQ(r->status, "5.1.1");
  EXPECT_EQ(r->recipient, "nobody@example.org");
  EXPECT_NE(r->diagnostic.find("User unknown"), std::string::npos) << r->diagnostic;
  EXPECT_EQ(r->original_message_id, "<c3.7.1@example.com>");
  ASSERT_FALSE(r->return_path_candidates.empty());
  EXPECT_EQ(r->return_path_candidates[0], "bounce+c3-7-abcdefghijklmnop@bounces.example.com");
}

TEST(BounceReports, CrlfLineEndingsReadTheSame) {
  auto lf = ParseBounceReport(Sample("postfix_dsn_hard.eml"));
  auto crlf = ParseBounceReport(Crlf(Sample("postfix_dsn_hard.eml")));
  ASSERT_TRUE(lf.has_value() && crlf.has_value());
  EXPECT_EQ(crlf->kind, lf->kind);
  EXPECT_EQ(crlf->status, lf->status);
  EXPECT_EQ(crlf->recipient, lf->recipient);
  EXPECT_EQ(crlf->original_message_id, lf->original_message_id);
  EXPECT_EQ(crlf->return_path_candidates, lf->return_path_candidates);
}

TEST(BounceReports, DelayedIsASoftBounce_QuotedMixedCaseReportType) {
  auto r = ParseBounceReport(Sample("dsn_delayed.eml"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->kind, ProviderEventKind::kSoftBounce);
  EXPECT_EQ(r->status, "4.4.7");
  EXPECT_EQ(r->recipient, "slow@example.org");
  EXPECT_EQ(r->original_message_id, "<c3.8.1@example.com>");
  EXPECT_EQ(r->return_path_candidates.at(0), "bounce+c3-8-abcdefghijklmnop@bounces.example.com");
}

TEST(BounceReports, FailedWith4xxIsSoftAndDeliveredIsNoBounce) {
  std::string s = Sample("postfix_dsn_hard.eml");
  std::string soft = s;
  soft.replace(soft.find("Status: 5.1.1"), 13, "Status: 4.2.2");
  auto r = ParseBounceReport(soft);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, ProviderEventKind::kSoftBounce);
  std::string delivered = s;
  delivered.replace(delivered.find("Action: failed"), 14, "Action: delivered");
  delivered.replace(delivered.find("Status: 5.1.1"), 13, "Status: 2.0.0");
  r = ParseBounceReport(delivered);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, ProviderEventKind::kDelivered);
}

TEST(BounceReports, ArfReportIsAComplaintWithItsOriginalMailFrom_Rfc5965_AppendixB) {
  auto r = ParseBounceReport(Sample("arf_abuse.eml"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->kind, ProviderEventKind::kComplaint);
  EXPECT_EQ(r->report_type, "feedback-report");
  EXPECT_EQ(r->diagnostic, "abuse");
  EXPECT_EQ(r->recipient, "user@example.com");
  EXPECT_EQ(r->report_id, "<arf-report-1@example.com>");
  // To: (the abuse desk), then Original-Mail-From, then the returned Return-Path.
  ASSERT_EQ(r->return_path_candidates.size(), 3u);
  EXPECT_EQ(r->return_path_candidates[0], "abuse@example.net");
  EXPECT_EQ(r->return_path_candidates[1], "bounce+c3-9-abcdefghijklmnop@bounces.example.com");
  EXPECT_EQ(r->return_path_candidates[2], "bounce+c3-9-abcdefghijklmnop@bounces.example.com");
}

TEST(BounceReports, OrdinaryMailAndBrokenReportsAreRefused) {
  auto plain = ParseBounceReport("From: a@example.com\nSubject: hi\n\nhello\n");
  ASSERT_FALSE(plain.has_value());
  EXPECT_EQ(plain.error().code, Errc::kInvalidArgument);
  // multipart/report of another type (RFC 3798 read receipts).
  EXPECT_FALSE(
      ParseBounceReport("Content-Type: multipart/report; report-type=disposition-"
                        "notification; boundary=b\n\n--b\n\nx\n--b--\n"));
  // The right type, but no report part.
  EXPECT_FALSE(ParseBounceReport(
      "Content-Type: multipart/report; report-type=delivery-status; boundary=b\n\n--b\n"
      "Content-Type: text/plain\n\nsorry\n--b--\n"));
  EXPECT_FALSE(ParseBounceReport(""));
}

TEST(BounceReports, AReportWithoutMessageIdIsNamedByItsBytes) {
  std::string s = Sample("dsn_delayed.eml");
  s.erase(s.find("Message-ID: <delay-1@relay.example.net>\n"), 40);
  auto a = ParseBounceReport(s), b = ParseBounceReport(s);
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(a->report_id.rfind("sha256:", 0), 0u);
  EXPECT_EQ(a->report_id, b->report_id);
}

}  // namespace
}  // namespace crmd::mail

// The pure parts of the pre-send check (presend.h, presend_content.h) and of test sends:
// content checks on a message, audience thresholds, organisational domains, who may receive
// a test. The DNS and database parts are tests/integration/tools_marketing/presend_test.cc.
#include "src/marketing/presend.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "src/marketing/presend_content.h"
#include "src/marketing/test_sends.h"

namespace crmd::marketing {
namespace {

using nlohmann::json;

constexpr const char* kBase = "https://crm.example.net";

std::vector<std::string> Ids(const std::vector<PresendCheck>& checks) {
  std::vector<std::string> out;
  for (const auto& c : checks) out.push_back(c.id + ":" + c.severity);
  return out;
}

bool Has(const std::vector<PresendCheck>& checks, const std::string& id_severity) {
  auto ids = Ids(checks);
  return std::find(ids.begin(), ids.end(), id_severity) != ids.end();
}

mail::Message Good() {
  mail::Message m;
  m.subject = "Spring menu";
  m.html = std::string("<p>Café Zoë, 1 Rue du Port</p><a href=\"") + kBase +
           "/u/tok\">Unsubscribe</a> <a href=\"https://zoe.example/menu\">Menu</a>"
           "<img src=\"https://zoe.example/a.png\" alt=\"A cup\">";
  return m;
}

std::vector<PresendCheck> Content(const mail::Message& m,
                                  const std::string& address = "Café Zoë, 1 Rue du Port") {
  return ContentChecks({.message = &m, .company_address = address, .public_base_url = kBase});
}

TEST(PresendContent, AGoodMessageHasNoFindings) { EXPECT_TRUE(Content(Good()).empty()); }

TEST(PresendContent, NoUnsubscribeLinkAndNoPostalAddressAreErrors) {
  mail::Message m = Good();
  m.html = "<p>Café Zoë, 1 Rue du Port</p>";
  EXPECT_TRUE(Has(Content(m), "unsubscribe:error"));
  EXPECT_TRUE(Has(Content(Good(), ""), "postal_address:error"));
  // Set, but not in the message: a warning (the template or the body should show it).
  EXPECT_TRUE(Has(Content(Good(), "Elsewhere 5"), "postal_address:warning"));
  // The link in the text part counts.
  m.text = std::string("Leave: ") + kBase + "/u/tok";
  EXPECT_FALSE(Has(Content(m), "unsubscribe:error"));
}

TEST(PresendContent, LinksSizeImagesAndSubjectAreWarnings) {
  mail::Message m = Good();
  m.html += "<a href=\"/menu\">x</a>";
  EXPECT_TRUE(Has(Content(m), "links:warning"));
  m = Good();
  m.html += "<a href=\"http://10.1.2.3/x\">x</a><a href=\"http://localhost:8080/\">y</a>";
  EXPECT_TRUE(Has(Content(m), "links:warning"));
  m = Good();
  m.html += "<a href=\"mailto:hi@zoe.example\">mail</a>";
  EXPECT_TRUE(Content(m).empty());
  m = Good();
  m.html += std::string(102 * 1024, 'x');
  EXPECT_TRUE(Has(Content(m), "size:warning"));
  m = Good();
  m.html += "<IMG src=\"https://zoe.example/b.png\">";
  EXPECT_TRUE(Has(Content(m), "alt_text:warning"));
  for (std::string subject :
       {std::string(""), std::string("BIG SALE NOW"), std::string(150, 'a')}) {
    m = Good();
    m.subject = subject;
    EXPECT_TRUE(Has(Content(m), "subject:warning")) << subject;
  }
}

TEST(PresendContent, AMergeTagEmptyForMoreThanATenthIsAWarning) {
  std::vector<MailRecipient> sample(10);
  for (int i = 0; i < 10; ++i) sample[i].first_name = i < 9 ? "Ada" : "";
  std::vector<std::string> sources = {"Hi {{first_name}}", "{{last_name | \"friend\"}}"};
  EXPECT_TRUE(MergeEmptyCheck(sources, sample).empty());  // 1 in 10: not more than a tenth
  sample[8].first_name = "";
  auto checks = MergeEmptyCheck(sources, sample);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].detail["tag"], "first_name");
}

TEST(PresendAudience, SharesAboveTheThresholdsWarnOrBlock) {
  AudienceShares shares{.sampled = 100, .role = 20, .disposable = 30, .unconfirmed = 10};
  auto checks = AudienceChecks(shares, json::object());
  EXPECT_TRUE(Has(checks, "audience_role:warning"));
  EXPECT_TRUE(Has(checks, "audience_disposable:error"));
  EXPECT_FALSE(Has(checks, "audience_unconfirmed:warning"));
  EXPECT_FALSE(Has(checks, "audience_unengaged:warning"));  // tracking off: not counted
  checks = AudienceChecks(shares, {{"audience_role", {{"error", 15}}}});
  EXPECT_TRUE(Has(checks, "audience_role:error"));
  shares.unengaged = 90;
  shares.tracking = true;
  EXPECT_TRUE(Has(AudienceChecks(shares, json::object()), "audience_unengaged:warning"));
}

TEST(PresendAudience, SharesCountRoleUnconfirmedAndUnengagedMembers) {
  const int64_t now = 1'800'000'000;
  std::vector<presend_repo::AudienceMember> members(3);
  members[0].fields.email = "info@zoe.example";
  members[0].confirmed = true;
  members[0].last_engaged_at = now - 3600;
  members[1].fields.email = "ada@zoe.example";
  members[1].last_engaged_at = now - 200 * 24 * 3600;
  members[2].fields.email = "bob@zoe.example";
  AudienceShares s = SharesOf(members, nullptr, true, now);
  EXPECT_EQ(s.sampled, 3);
  EXPECT_EQ(s.role, 1);
  EXPECT_EQ(s.unconfirmed, 2);
  EXPECT_EQ(s.unengaged, 2);
}

TEST(PresendAuth, OrganisationalAndReservedDomains) {
  EXPECT_EQ(OrganisationalDomain("news.mail.zoe-cafe.net"), "zoe-cafe.net");
  EXPECT_EQ(OrganisationalDomain("shop.example.co.uk"), "example.co.uk");
  EXPECT_EQ(OrganisationalDomain("zoe.net"), "zoe.net");
  for (const char* d :
       {"example.com", "news.example.org", "a.test", "localhost", "x.invalid", "127.0.0.1"})
    EXPECT_TRUE(IsReservedDomain(d)) << d;
  EXPECT_FALSE(IsReservedDomain("zoe-cafe.net"));
}

TEST(TestSends, AllowedListTakesAddressesAndDomains) {
  json allowed = {"QA@Zoe.example", "@agency.example"};
  EXPECT_TRUE(TestRecipientAllowed(allowed, "qa@zoe.example"));
  EXPECT_TRUE(TestRecipientAllowed(allowed, "anyone@agency.example"));
  EXPECT_FALSE(TestRecipientAllowed(allowed, "anyone@sub.agency.example"));
  EXPECT_FALSE(TestRecipientAllowed(allowed, "other@zoe.example"));
  EXPECT_FALSE(TestRecipientAllowed(json::array(), "qa@zoe.example"));
}

}  // namespace
}  // namespace crmd::marketing

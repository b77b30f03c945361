#include "src/crm/email_validation.h"

#include <gtest/gtest.h>

#include "tests/unit/crm/fixture.h"

namespace crmd::crm {
namespace {

TEST(EmailSyntax, NormalisesCaseAndWhitespace) {
  auto n = NormalizeEmail("  Jane.Doe@Example.COM \n");
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, "jane.doe@example.com");
}

TEST(EmailSyntax, RejectsCommonMistakes) {
  for (const char* bad :
       {"", "plainaddress", "@example.com", "jane@", "jane..doe@example.com", ".jane@example.com",
        "jane.@example.com", "jane@example", "jane@-example.com", "jane@example-.com",
        "jane@exa mple.com", "ja ne@example.com", "jane@example..com", "jane@[127.0.0.1]",
        "jane@example.123"}) {
    EXPECT_FALSE(NormalizeEmail(bad)) << bad;
  }
}

TEST(EmailSyntax, LocalPartAtMost64Octets_Rfc5321_4_5_3_1_1) {
  std::string local(64, 'a');
  EXPECT_TRUE(NormalizeEmail(local + "@example.com"));
  auto r = NormalizeEmail(local + "a@example.com");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "syntax:local_too_long");
}

TEST(EmailSyntax, LabelsAtMost63Octets_Rfc1035_2_3_4) {
  EXPECT_TRUE(NormalizeEmail("a@" + std::string(63, 'x') + ".com"));
  EXPECT_FALSE(NormalizeEmail("a@" + std::string(64, 'x') + ".com"));
}

TEST(EmailSyntax, AcceptsAtextAndQuotedLocalParts_Rfc5322_3_4_1) {
  EXPECT_TRUE(NormalizeEmail("o'brien+news@example.com"));
  EXPECT_TRUE(NormalizeEmail("{weird}!#$%&*=?^_`|~-@example.com"));
  auto q = NormalizeEmail("\"John Doe\"@example.com");
  ASSERT_TRUE(q);
  EXPECT_EQ(*q, "\"John Doe\"@example.com");  // quoted local parts keep their case
  EXPECT_FALSE(NormalizeEmail("\"unterminated@example.com"));
}

TEST(EmailSyntax, InternationalDomainBecomesPunycode_Rfc3492) {
  auto a = NormalizeEmail("kontakt@Bücher.de");
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, "kontakt@xn--bcher-kva.de");
  auto b = DomainToAscii("münchen.de");
  ASSERT_TRUE(b);
  EXPECT_EQ(*b, "xn--mnchen-3ya.de");
  auto c = DomainToAscii("пример.рф");
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, "xn--e1afmkfd.xn--p1ai");
}

TEST(EmailSyntax, AcceptsUtf8LocalPart_Rfc6531) {
  EXPECT_TRUE(NormalizeEmail("用户@example.com"));
  EXPECT_FALSE(NormalizeEmail("bad\xff@example.com"));
}

TEST(EmailSyntax, NonAsciiLocalPartsAreLowerCasedLikeDomains) {
  auto upper = NormalizeEmail("ZOË@Example.com");
  auto lower = NormalizeEmail("zoë@example.com");
  ASSERT_TRUE(upper);
  ASSERT_TRUE(lower);
  EXPECT_EQ(*upper, *lower);
  EXPECT_EQ(*upper, "zo\xc3\xab@example.com");
  EXPECT_EQ(*NormalizeEmail("ΑΛΦΑ@example.com"), *NormalizeEmail("αλφα@example.com"));
  EXPECT_EQ(*NormalizeEmail("用户@example.com"), "用户@example.com");  // no case: unchanged
}

TEST(EmailValidator, FlagsDisposableDomainsAndTheirSubdomains) {
  EmailValidator v({});
  auto r = v.Validate("someone@mailinator.com", ValidationMode::kSyntax);
  EXPECT_TRUE(r.valid);
  EXPECT_TRUE(r.disposable);
  EXPECT_TRUE(v.Validate("x@inbox.guerrillamail.com", ValidationMode::kSyntax).disposable);
  EXPECT_FALSE(v.Validate("x@example.com", ValidationMode::kSyntax).disposable);
}

TEST(EmailValidator, CanRefuseDisposableDomains) {
  EmailValidator v({.refuse_disposable = true});
  auto r = v.Validate("someone@yopmail.com", ValidationMode::kSyntax);
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.reasons, std::vector<std::string>{"disposable_domain"});
}

TEST(EmailValidator, FlagsRoleAccountsIncludingSubaddresses) {
  EmailValidator v({});
  EXPECT_TRUE(v.Validate("Support@example.com", ValidationMode::kSyntax).role_account);
  EXPECT_TRUE(v.Validate("info+x@example.com", ValidationMode::kSyntax).role_account);
  EXPECT_FALSE(v.Validate("jane@example.com", ValidationMode::kSyntax).role_account);
}

TEST(EmailValidator, DnsModeNeedsMxOrAddress_Rfc5321_5_1) {
  testing::FakeResolver dns;
  dns.answers["mx.example"] = {.domain_exists = true, .has_mx = true};
  dns.answers["a-only.example"] = {.domain_exists = true, .has_address = true};
  dns.answers["nothing.example"] = {.domain_exists = true};
  dns.answers["nullmx.example"] = {.domain_exists = true, .null_mx = true};
  EmailValidator v({.resolver = &dns});
  EXPECT_TRUE(v.Validate("a@mx.example", ValidationMode::kDns).valid);
  EXPECT_TRUE(v.Validate("a@a-only.example", ValidationMode::kDns).valid);
  auto none = v.Validate("a@nothing.example", ValidationMode::kDns);
  EXPECT_FALSE(none.valid);
  EXPECT_EQ(none.reasons, std::vector<std::string>{"dns:no_mail_host"});
  auto nx = v.Validate("a@missing.example", ValidationMode::kDns);
  EXPECT_FALSE(nx.valid);
  EXPECT_EQ(nx.reasons, std::vector<std::string>{"dns:no_such_domain"});
}

TEST(EmailValidator, NullMxMeansNoMail_Rfc7505) {
  testing::FakeResolver dns;
  dns.answers["nullmx.example"] = {.domain_exists = true, .null_mx = true};
  EmailValidator v({.resolver = &dns});
  auto r = v.Validate("a@nullmx.example", ValidationMode::kDns);
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.reasons, std::vector<std::string>{"dns:null_mx"});
}

TEST(EmailValidator, TemporaryDnsFailureFailsOpenWithAReason) {
  testing::FakeResolver dns;
  dns.fail = true;
  EmailValidator v({.resolver = &dns});
  auto r = v.Validate("a@example.com", ValidationMode::kDns);
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.reasons, std::vector<std::string>{"dns:temporary_failure"});
}

TEST(EmailValidator, SyntaxModeDoesNotTouchDns) {
  testing::FakeResolver dns;  // everything NXDOMAIN
  EmailValidator v({.resolver = &dns});
  EXPECT_TRUE(v.Validate("a@example.com", ValidationMode::kSyntax).valid);
}

TEST(EmailValidator, OffModeOnlyNeedsAnAt) {
  EmailValidator v({});
  auto r = v.Validate(" Odd..Address@Host ", ValidationMode::kOff);
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.normalized, "odd..address@host");
  EXPECT_FALSE(v.Validate("no-at-sign", ValidationMode::kOff).valid);
}

}  // namespace
}  // namespace crmd::crm

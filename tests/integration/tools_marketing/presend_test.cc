// The pre-send check, driven as an assistant would: a real crmd whose DNS lookups go to a
// real DNS server on loopback (tests/support/dns_server.py, dns_server config) and whose
// messages go to a real SMTP server. Good records let a campaign through; each broken
// record, a missing postal address or a missing unsubscribe link shows in the preview's
// checks, errors block confirm_action (dependency_blocked naming the checks) until fixed.
// Human override is tests/integration/approvals/presend_override_test.cc.
#include "src/governance/settings.h"
#include "tests/integration/tools_marketing/fixture.h"
#include "tests/support/dns_server.h"
#include "tests/unit/mail/dkim_keys.h"
#include "tests/unit/mail/python.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

constexpr const char* kDomain = "zoe-cafe.net";
constexpr const char* kDkimName = "s1._domainkey.zoe-cafe.net";

// A second key, to publish where the configured one belongs.
const mail::testing::TestKey& OtherKey() {
  static const mail::testing::TestKey key = [] {
    EVP_PKEY* k = EVP_RSA_gen(2048);
    mail::testing::TestKey t;
    unsigned char* der = nullptr;
    int n = i2d_PUBKEY(k, &der);
    t.dns_txt =
        "v=DKIM1; k=rsa; p=" + crypto::Base64Encode(std::string(reinterpret_cast<char*>(der), n));
    OPENSSL_free(der);
    EVP_PKEY_free(k);
    return t;
  }();
  return key;
}

struct DnsFirst {
  DnsServer dns;
  mail::testing::SmtpSink sink;
  mail::testing::TempDir keys;
  std::string key_file = keys.Write("dkim.pem", mail::testing::TestRsaKey().private_pem);
};

TestServerOptions Checked(const DnsFirst& f) {
  return TestServerOptions{
      .configure =
          [&f](Config& c) {
            c.smtp_url = "smtp://127.0.0.1:" + std::to_string(f.sink.port());
            c.mail_rate_per_second = 0;
            c.mail_poll_interval_ms = 100;
            c.dns_server = f.dns.address();
            c.dkim_private_key_file = f.key_file;
            c.dkim_selector = "s1";
            c.dkim_domain = kDomain;
          },
      // Tests change records between previews: nothing is kept.
      .before_start = [](app::App::Services& s) { s.marketing->sender_auth->set_cache_s(0); }};
}

class Presend : public DnsFirst, public MarketingTools {
 protected:
  Presend() : MarketingTools(Checked(*this)) { PublishGoodRecords(); }

  void PublishGoodRecords() {
    // With a long verification record beside it, the answer is over 512 bytes: the server
    // truncates it over UDP and crmd asks again over TCP.
    dns.SetTxt(kDomain,
               {"v=spf1 ip4:192.0.2.0/24 -all", "site-verification=" + std::string(600, 'k')});
    dns.SetTxt(kDkimName, {mail::testing::TestRsaKey().dns_txt});
    dns.SetTxt(std::string("_dmarc.") + kDomain, {"v=DMARC1; p=quarantine"});
  }

  int64_t Campaign(McpClient& c, const std::string& html) {
    int64_t list = AddList("list-" + std::to_string(Count("SELECT COUNT(*) FROM lists")));
    for (int i = 0; i < 3; ++i)
      InList(AddContact("p" + std::to_string(list) + "-" + std::to_string(i) + "@zoe-cafe.net"),
             list);
    json out = Call(c, "create_campaign",
                    {{"name", "Checked"},
                     {"subject", "Spring menu"},
                     {"from_email", std::string("news@") + kDomain},
                     {"html_body", html},
                     {"audience", {{"lists", {list}}}}});
    return out["campaign"].value("id", int64_t{0});
  }

  static constexpr const char* kGoodHtml =
      "<p>Our spring menu.</p><p><a href=\"https://zoe-cafe.net/menu\">Menu</a></p>"
      "<p>{{company_address}} <a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>";

  static std::vector<std::string> Ids(const json& checks, const std::string& severity) {
    std::vector<std::string> out;
    for (const auto& c : checks)
      if (c.value("severity", "") == severity) out.push_back(c.value("id", ""));
    return out;
  }

  // The preview's checks, after asserting the preview was given.
  json Preview(McpClient& c, int64_t id, json* reply = nullptr) {
    json p = Call(c, "activate_campaign", {{"id", id}});
    EXPECT_EQ(p.value("status", ""), "confirmation_required") << p.dump();
    if (reply) *reply = p;
    return p["preview"].value("checks", json::array());
  }

  // confirm_action is refused with dependency_blocked naming `check`.
  void ExpectBlocked(McpClient& c, int64_t id, const std::string& check) {
    json reply;
    json checks = Preview(c, id, &reply);
    EXPECT_EQ(Ids(checks, "error"), std::vector<std::string>{check}) << checks.dump();
    ASSERT_TRUE(reply.contains("blocked_by")) << reply.dump();
    json e =
        ExpectToolError(c, "confirm_action", {{"confirmation_token", reply["confirmation_token"]}},
                        "dependency_blocked");
    EXPECT_NE(e.dump().find(check), std::string::npos) << e.dump();
    EXPECT_EQ(Count("SELECT COUNT(*) FROM campaigns WHERE id = ? AND status = 'draft'", {id}), 1);
  }

  void Confirmed(McpClient& c, int64_t id) {
    json reply;
    json checks = Preview(c, id, &reply);
    EXPECT_TRUE(Ids(checks, "error").empty()) << checks.dump();
    json done = Call(c, "confirm_action", {{"confirmation_token", reply["confirmation_token"]}});
    EXPECT_EQ(done.value("status", ""), "done") << done.dump();
  }

  void SetCompanyAddress(const std::string& address) {
    auto& settings = *server_.app().services().governance->settings;
    auto cur = settings.Get();
    ASSERT_TRUE(cur.has_value());
    ASSERT_TRUE(settings.Update({.kind = "cli", .subject = "test"}, cur->revision,
                                {{"company_address", address}}));
  }
};

TEST_F(Presend, GoodRecordsLetTheCampaignThroughAndItIsSent) {
  auto c = Client();
  int64_t id = Campaign(*c, kGoodHtml);
  json checks = Preview(*c, id);
  for (const char* dns_check :
       {"spf", "dkim", "dmarc", "alignment", "unsubscribe", "postal_address"})
    for (const auto& k : checks) EXPECT_NE(k.value("id", ""), dns_check) << checks.dump();
  Confirmed(*c, id);
  EXPECT_TRUE(sink.WaitFor(3));
  // Recorded: the confirm's audit row keeps the checks (here the audience warnings).
  EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = 'confirm_action' AND details "
                  "LIKE '%checks%'"),
            1);
}

TEST_F(Presend, AMismatchedDkimKeyBlocksUntilTheRightOneIsPublished) {
  auto c = Client();
  int64_t id = Campaign(*c, kGoodHtml);
  dns.SetTxt(kDkimName, {OtherKey().dns_txt});
  ExpectBlocked(*c, id, "dkim");
  dns.SetTxt(kDkimName, {});  // none published at all
  ExpectBlocked(*c, id, "dkim");
  dns.SetTxt(kDkimName, {mail::testing::TestRsaKey().dns_txt});
  Confirmed(*c, id);
}

TEST_F(Presend, MissingSpfAndDmarcAreWarningsThatDoNotBlock) {
  auto c = Client();
  int64_t id = Campaign(*c, kGoodHtml);
  dns.SetTxt(kDomain, {});
  json checks = Preview(*c, id);
  auto warnings = Ids(checks, "warning");
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), "spf"), warnings.end()) << checks.dump();
  dns.SetTxt(kDomain, {"v=spf1 ip4:192.0.2.0/24 -all"});
  dns.SetTxt(std::string("_dmarc.") + kDomain, {});
  checks = Preview(*c, id);
  warnings = Ids(checks, "warning");
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), "dmarc"), warnings.end()) << checks.dump();
  EXPECT_EQ(std::find(warnings.begin(), warnings.end(), "spf"), warnings.end()) << checks.dump();
  Confirmed(*c, id);
}

TEST_F(Presend, ALookupThatTimesOutIsAWarning) {
  auto c = Client();
  int64_t id = Campaign(*c, kGoodHtml);
  dns.Drop(kDkimName);
  json checks = Preview(*c, id);
  bool timed_out = false;
  for (const auto& k : checks)
    if (k["id"] == "dkim") {
      EXPECT_EQ(k["severity"], "warning") << checks.dump();
      timed_out = k["message"].get<std::string>().find("timed out") != std::string::npos;
    }
  EXPECT_TRUE(timed_out) << checks.dump();
}

TEST_F(Presend, NoPostalAddressOrNoUnsubscribeLinkBlocksUntilFixed) {
  auto c = Client();
  int64_t id = Campaign(*c, kGoodHtml);
  SetCompanyAddress("");
  ExpectBlocked(*c, id, "postal_address");
  SetCompanyAddress("Café Zoë, 1 Rue du Port, 13002 Marseille");
  int64_t no_link = Campaign(*c, "<p>{{company_address}}</p><p>Our spring menu.</p>");
  ExpectBlocked(*c, no_link, "unsubscribe");
  json k = Call(*c, "get_campaign", {{"id", no_link}});
  Call(*c, "update_campaign",
       {{"id", no_link},
        {"expected_revision", k["campaign"]["revision"]},
        {"html_body",
         "<p>{{company_address}}</p><p><a href=\"{{unsubscribe_url}}\">Leave</a></p>"}});
  Confirmed(*c, no_link);
  Confirmed(*c, id);
}

TEST_F(Presend, ContentWarnings) {
  auto c = Client();
  int64_t id = Campaign(*c, std::string(kGoodHtml) +
                                "<a href=\"/relative\">r</a><a href=\"http://192.168.1.5/x\">p</a>"
                                "<img src=\"https://zoe-cafe.net/a.png\"><p>Hi {{first_name}}</p>");
  json checks = Preview(*c, id);
  auto warnings = Ids(checks, "warning");
  for (const char* w : {"links", "alt_text", "merge_empty", "audience_unconfirmed"})
    EXPECT_NE(std::find(warnings.begin(), warnings.end(), w), warnings.end())
        << w << ": " << checks.dump();
  EXPECT_TRUE(Ids(checks, "error").empty()) << checks.dump();
}

TEST_F(Presend, AnAutomationsEmailStepsAreCheckedToo) {
  auto c = Client();
  json made = Call(*c, "create_automation",
                   {{"name", "Welcome"},
                    {"trigger", {{"type", "contact_created"}}},
                    {"steps",
                     {{{"type", "add_tag"}, {"tag_id", AddTag("seen")}},
                      {{"type", "send_email"},
                       {"subject", "Welcome"},
                       {"from_email", std::string("hello@") + kDomain},
                       {"text_body", "Glad you are here."}}}}});
  int64_t id = made["automation"]["id"];
  dns.SetTxt(kDkimName, {OtherKey().dns_txt});
  json preview = Call(*c, "activate_automation", {{"id", id}});
  ASSERT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
  json checks = preview["preview"]["checks"];
  auto errors = Ids(checks, "error");
  std::sort(errors.begin(), errors.end());
  EXPECT_EQ(errors, (std::vector<std::string>{"dkim", "unsubscribe"})) << checks.dump();
  for (const auto& k : checks)
    if (k["id"] == "unsubscribe") EXPECT_EQ(k["detail"]["step"], 2) << checks.dump();
  json e =
      ExpectToolError(*c, "confirm_action", {{"confirmation_token", preview["confirmation_token"]}},
                      "dependency_blocked");
  EXPECT_NE(e.dump().find("unsubscribe"), std::string::npos) << e.dump();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automations WHERE id = ? AND status = 'active'", {id}), 0);

  dns.SetTxt(kDkimName, {mail::testing::TestRsaKey().dns_txt});
  json steps = made["automation"]["steps"];
  steps[1]["text_body"] = "Glad you are here. Leave: {{unsubscribe_url}}";
  Call(*c, "update_automation",
       {{"id", id}, {"expected_revision", made["automation"]["revision"]}, {"steps", steps}});
  preview = Call(*c, "activate_automation", {{"id", id}});
  EXPECT_TRUE(Ids(preview["preview"]["checks"], "error").empty()) << preview.dump();
  json done = Call(*c, "confirm_action", {{"confirmation_token", preview["confirmation_token"]}});
  EXPECT_EQ(done.value("status", ""), "done") << done.dump();
}

}  // namespace
}  // namespace crmd::testing

// Values that go into every message's header as they are (a campaign's or an email step's
// sender name and subject, the settings' sender name) are refused when they are saved, with
// a tool error naming the field, instead of failing every message built with them later.
#include "tests/integration/tools_marketing/fixture.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

class SenderNames : public MarketingTools {};

const std::vector<std::string> kBadHeaderText = {
    "Shop\r\nBcc: everyone@attacker.example",  // header injection
    "Shop\nTeam",                              // a bare line break
    std::string("Shop\x07", 5),                // a control character
    "Shop \xc2\x85 Team",                      // a C1 control (NEL)
};

TEST_F(SenderNames, ACampaignsSenderNameAndSubjectMustFitAMailHeader) {
  auto c = Client();
  for (const auto& bad : kBadHeaderText) {
    json err = ExpectToolError(*c, "create_campaign", {{"name", "Launch"}, {"from_name", bad}},
                               "validation_failed");
    EXPECT_NE(err.dump().find("from_name"), std::string::npos) << err.dump();
    err = ExpectToolError(*c, "create_campaign", {{"name", "Launch"}, {"subject", bad}},
                          "validation_failed");
    EXPECT_NE(err.dump().find("subject"), std::string::npos) << err.dump();
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaigns"), 0);
  json made = Call(*c, "create_campaign",
                   {{"name", "Launch"}, {"from_name", "Café Ünïcode \"Team\""}, {"subject", "Hi"}});
  int64_t id = made["campaign"].value("id", int64_t{0});
  ASSERT_GT(id, 0) << made.dump();
  ExpectToolError(*c, "update_campaign", {{"id", id}, {"from_name", kBadHeaderText[0]}},
                  "validation_failed");
  // A sender address a message's From refuses would fail every message too.
  for (const char* bad :
       {"news@shop.example>", "news(team)@shop.example", "news:team@shop.example"})
    ExpectToolError(*c, "update_campaign", {{"id", id}, {"from_email", bad}}, "validation_failed");
}

TEST_F(SenderNames, AnEmailStepsSenderNameMustFitAMailHeader) {
  auto c = Client();
  json err = ExpectToolError(*c, "create_automation",
                             {{"name", "Welcome"},
                              {"trigger", {{"type", "contact_created"}}},
                              {"steps",
                               {{{"type", "send_email"},
                                 {"subject", "Hello"},
                                 {"text_body", "Hi"},
                                 {"from_name", kBadHeaderText[0]}}}}},
                             "validation_failed");
  EXPECT_NE(err.dump().find("from_name"), std::string::npos) << err.dump();
  err = ExpectToolError(*c, "create_automation",
                        {{"name", "Welcome"},
                         {"trigger", {{"type", "contact_created"}}},
                         {"steps",
                          {{{"type", "send_email"},
                            {"subject", "Hello"},
                            {"text_body", "Hi"},
                            {"from_email", "news@shop.example>"}}}}},
                        "validation_failed");
  EXPECT_NE(err.dump().find("from_email"), std::string::npos) << err.dump();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automations"), 0);
}

TEST_F(SenderNames, ASequenceEmailsSubjectMustFitAMailHeader) {
  auto c = Client();
  json err = ExpectToolError(
      *c, "create_sequence",
      {{"name", "Onboarding"}, {"emails", {{{"subject", kBadHeaderText[1]}, {"text_body", "Hi"}}}}},
      "validation_failed");
  EXPECT_NE(err.dump().find("subject"), std::string::npos) << err.dump();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM sequences"), 0);
}

TEST_F(SenderNames, TheSettingsSenderNameMustFitAMailHeader) {
  auto c = Client("settings:read,settings:write");
  int64_t rev = Call(*c, "get_settings", json::object()).value("revision", int64_t{0});
  for (const auto& bad : kBadHeaderText) {
    json err = ExpectToolError(
        *c, "update_settings",
        {{"expected_revision", rev}, {"settings", {{"sender", {{"from_name", bad}}}}}},
        "validation_failed");
    EXPECT_NE(err.dump().find("sender.from_name"), std::string::npos) << err.dump();
  }
  json kept = Call(*c, "get_settings", json::object());
  EXPECT_EQ(kept.value("revision", int64_t{-1}), rev);
  EXPECT_EQ(kept["settings"]["sender"]["from_name"], "");
}

}  // namespace
}  // namespace crmd::testing

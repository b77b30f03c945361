// The settings accessors that every contact creation reads (EmailValidationMode and its
// kind) come from a document at most SettingsService::kRecentMillis old: a change made on
// this node counts for the next call, one made on another node within that time.
#include "src/governance/settings.h"

#include <chrono>

#include "tests/unit/crm/fixture.h"

namespace crmd::crm {
namespace {

class SettingsRecent : public testing::CrmFixture {
 protected:
  void SetMode(const std::string& mode) { UpdateSettings({{"email_validation_mode", mode}}); }
};

TEST_F(SettingsRecent, AChangeMadeOnThisNodeCountsForTheNextContact) {
  // nothing.example has no mail host: only the "dns" mode refuses it.
  resolver.answers["nothing.example"] = {.domain_exists = true};
  ContactInput in;
  in.email = "first@nothing.example";
  ASSERT_TRUE(s->contacts->Create(alice, in));  // "syntax", and the document is now recent
  SetMode("dns");
  in.email = "second@nothing.example";
  auto refused = s->contacts->Create(alice, in);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::kInvalidArgument);
  SetMode("syntax");
  EXPECT_TRUE(s->contacts->Create(alice, in));
}

TEST_F(SettingsRecent, AChangeMadeOnAnotherNodeCountsWithinTheRecentWindow) {
  // A second node: its own SettingsService over the same database.
  governance::SettingsService other({.db = db.get(), .clock = &clock, .audit = nullptr});
  ASSERT_EQ(other.EmailValidationMode(), "syntax");
  SetMode("dns");
  EXPECT_EQ(s->governance.settings->EmailValidationMode(), "dns");  // this node: at once
  EXPECT_EQ(other.EmailValidationMode(), "syntax");  // the other: its document is recent
  clock.Advance(std::chrono::milliseconds(governance::SettingsService::kRecentMillis + 100));
  EXPECT_EQ(other.EmailValidationMode(), "dns");
  EXPECT_FALSE(other.DoubleOptIn());
}

}  // namespace
}  // namespace crmd::crm

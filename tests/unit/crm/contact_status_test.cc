#include "src/crm/contact_status.h"

#include <gtest/gtest.h>

namespace crmd::crm {
namespace {

TEST(StatusMachine, AllowsDocumentedMoves) {
  EXPECT_TRUE(CheckTransition({.from = "pending", .to = "subscribed"}));
  EXPECT_TRUE(CheckTransition({.from = "pending", .to = "complained"}));
  EXPECT_TRUE(CheckTransition({.from = "subscribed", .to = "unsubscribed"}));
  EXPECT_TRUE(CheckTransition({.from = "subscribed", .to = "bounced"}));
  EXPECT_TRUE(CheckTransition({.from = "bounced", .to = "unsubscribed"}));
  EXPECT_TRUE(CheckTransition({.from = "complained", .to = "unsubscribed"}));
}

TEST(StatusMachine, SameStatusIsANoOp) {
  for (const char* s : kStatuses) EXPECT_TRUE(CheckTransition({.from = s, .to = s}));
}

TEST(StatusMachine, ResubscribeNeedsExplicitConsent) {
  auto r = CheckTransition({.from = "unsubscribed", .to = "subscribed"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kInvalidTransition);
  EXPECT_NE(r.error().message.find("consent"), std::string::npos);
  EXPECT_TRUE(CheckTransition({.from = "unsubscribed", .to = "subscribed", .consent = true}));
}

TEST(StatusMachine, BouncedAndComplainedNeverReturnToSubscribed) {
  for (const char* from : {"bounced", "complained"}) {
    auto r = CheckTransition({.from = from, .to = "subscribed", .consent = true});
    ASSERT_FALSE(r) << from;
    EXPECT_EQ(r.error().code, Errc::kInvalidTransition);
  }
  EXPECT_FALSE(CheckTransition({.from = "complained", .to = "bounced"}));
}

TEST(StatusMachine, NothingReturnsToPending) {
  for (const char* from : {"subscribed", "unsubscribed", "bounced", "complained"})
    EXPECT_FALSE(CheckTransition({.from = from, .to = "pending", .consent = true})) << from;
}

TEST(StatusMachine, UnknownStatusIsAValidationError) {
  auto r = CheckTransition({.from = "pending", .to = "spam"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
}

TEST(StatusMachine, AllowedTargetsListsConsentMovesOnlyWithConsent) {
  auto without = AllowedTargets("unsubscribed", false);
  auto with = AllowedTargets("unsubscribed", true);
  EXPECT_EQ(std::count(without.begin(), without.end(), "subscribed"), 0);
  EXPECT_EQ(std::count(with.begin(), with.end(), "subscribed"), 1);
}

}  // namespace
}  // namespace crmd::crm

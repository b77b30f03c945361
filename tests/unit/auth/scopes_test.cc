#include "auth/scopes.h"

#include <gtest/gtest.h>

namespace crmd::auth {
namespace {

TEST(Scopes, CatalogueHasEveryToolScope) {
  EXPECT_EQ(AllScopes().size(), 22u);
  EXPECT_TRUE(IsKnownScope("campaigns:activate"));
  EXPECT_FALSE(IsKnownScope("admin"));
}

TEST(Scopes, ParsesSpaceDelimitedList_Rfc6749_3_3) {
  auto s = ParseScope("contacts:read  lists:read contacts:read");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(JoinScope(*s), "contacts:read lists:read");
}

TEST(Scopes, RefusesUnknownScopeAndNamesIt) {
  auto s = ParseScope("contacts:read root");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("root"), std::string::npos);
}

TEST(Scopes, RefusesInvalidCharacters_Rfc6749_3_3) {
  EXPECT_FALSE(ParseScope("contacts:read\"").has_value());
  EXPECT_FALSE(ParseScope("contacts:read\\").has_value());
}

TEST(Scopes, SubsetMeansNarrowingOnly) {
  EXPECT_TRUE(IsSubset({"contacts:read"}, {"contacts:read", "lists:read"}));
  EXPECT_FALSE(IsSubset({"contacts:write"}, {"contacts:read"}));
}

}  // namespace
}  // namespace crmd::auth

#include "auth/roles.h"

#include <gtest/gtest.h>

#include "auth/scopes.h"

namespace crmd::auth {
namespace {

TEST(Roles, NamesRoundTripAndNothingElseParses) {
  for (const auto& name : RoleNames()) {
    auto role = ParseRole(name);
    ASSERT_TRUE(role) << name;
    EXPECT_EQ(RoleName(*role), name);
  }
  EXPECT_FALSE(ParseRole("admin"));
  EXPECT_FALSE(ParseRole("Administrator"));
  EXPECT_FALSE(ParseRole(""));
}

TEST(Roles, EachCeilingContainsTheOneBelow) {
  const auto& viewer = ScopeCeiling(Role::kViewer);
  const auto& editor = ScopeCeiling(Role::kEditor);
  const auto& admin = ScopeCeiling(Role::kAdministrator);
  EXPECT_TRUE(IsSubset(viewer, editor));
  EXPECT_TRUE(IsSubset(editor, admin));
  EXPECT_EQ(admin.size(), AllScopes().size());
  for (const auto& s : viewer) EXPECT_NE(s.find(":read"), std::string::npos) << s;
  EXPECT_TRUE(viewer.count("reports:read"));
  EXPECT_FALSE(viewer.count("contacts:write"));
  // The settings hold the approval policy: an editor cannot change them.
  EXPECT_FALSE(editor.count("settings:write"));
  EXPECT_TRUE(editor.count("automations:write"));
  EXPECT_TRUE(admin.count("settings:write"));
}

TEST(Roles, CapScopesDropsWhatTheRoleMayNotHold) {
  std::set<std::string> asked = {"contacts:read", "contacts:write", "settings:write"};
  EXPECT_EQ(CapScopes(asked, Role::kViewer), (std::set<std::string>{"contacts:read"}));
  EXPECT_EQ(CapScopes(asked, Role::kEditor),
            (std::set<std::string>{"contacts:read", "contacts:write"}));
  EXPECT_EQ(CapScopes(asked, Role::kAdministrator), asked);
}

}  // namespace
}  // namespace crmd::auth

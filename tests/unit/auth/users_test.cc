#include "auth/users.h"

#include <gtest/gtest.h>

#include "auth/rate_limit.h"
#include "src/store/db.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_server.h"

namespace crmd::auth {
namespace {

class UsersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Open("sqlite:" + dir_.path() + "/t.db", 2);
    ASSERT_TRUE(db) << db.error().detail;
    db_ = std::move(*db);
    users_ = std::make_unique<Users>(*db_, clock_);
  }
  testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<Users> users_;
};

TEST(NormalizeEmail, LowerCasesAndTrims) {
  EXPECT_EQ(*NormalizeEmail("  Alice@Example.COM "), "alice@example.com");
  EXPECT_FALSE(NormalizeEmail("no-at-sign"));
  EXPECT_FALSE(NormalizeEmail("@example.com"));
  EXPECT_FALSE(NormalizeEmail("a@"));
  EXPECT_FALSE(NormalizeEmail("a@b@c"));
  EXPECT_FALSE(NormalizeEmail("a b@c.d"));
}

TEST_F(UsersTest, CreateThenVerifyByEmailCaseInsensitively) {
  auto u = users_->Create("Alice@Example.com", "correct horse", false);
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_EQ(u->email, "alice@example.com");
  auto v = users_->Verify("ALICE@example.com", "correct horse");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->id, u->id);
  EXPECT_FALSE(v->is_admin);
}

TEST_F(UsersTest, WrongPasswordAndUnknownEmailAreTheSameError) {
  ASSERT_TRUE(users_->Create("bob@example.com", "correct horse", true));
  auto wrong = users_->Verify("bob@example.com", "wrong horse");
  auto unknown = users_->Verify("nobody@example.com", "correct horse");
  ASSERT_FALSE(wrong);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(wrong.error().code, Errc::kUnauthenticated);
  EXPECT_EQ(unknown.error().code, Errc::kUnauthenticated);
  EXPECT_EQ(wrong.error().message, unknown.error().message);
}

TEST_F(UsersTest, StoresOnlyAScryptHash) {
  ASSERT_TRUE(users_->Create("carol@example.com", "correct horse", false));
  auto hash = db_->Read([](store::Conn& c) -> Result<std::string> {
    auto r = c.QueryOne("SELECT password_hash FROM users");
    if (!r) return Fail(r.error());
    return (*r)->Str(0);
  });
  ASSERT_TRUE(hash);
  EXPECT_EQ(hash->rfind("scrypt$", 0), 0u);
  EXPECT_EQ(hash->find("correct horse"), std::string::npos);
}

TEST_F(UsersTest, RefusesDuplicatesAndShortPasswords) {
  ASSERT_TRUE(users_->Create("dan@example.com", "correct horse", false));
  auto dup = users_->Create("DAN@example.com", "another password", false);
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
  auto weak = users_->Create("eve@example.com", "short", false);
  ASSERT_FALSE(weak);
  EXPECT_EQ(weak.error().code, Errc::kInvalidArgument);
}

TEST_F(UsersTest, CountsAdminsAndChangesPasswords) {
  EXPECT_EQ(*users_->CountAdmins(), 0);
  ASSERT_TRUE(users_->Create("root@example.com", "correct horse", true));
  EXPECT_EQ(*users_->CountAdmins(), 1);
  ASSERT_TRUE(users_->SetPassword("root@example.com", "new password!"));
  EXPECT_FALSE(users_->Verify("root@example.com", "correct horse"));
  EXPECT_TRUE(users_->Verify("root@example.com", "new password!"));
  EXPECT_EQ(users_->SetPassword("ghost@example.com", "new password!").error().code,
            Errc::kNotFound);
}

TEST_F(UsersTest, DisabledAndDeletedPeopleCannotSignInAndTheLastAdministratorStays) {
  ASSERT_TRUE(users_->Create("root@example.com", "correct horse", true));
  ASSERT_TRUE(users_->Create("ann@example.com", "correct horse", Role::kViewer, {}));
  ASSERT_TRUE(users_->Disable("ann@example.com", {}));
  auto refused = users_->Verify("ann@example.com", "correct horse");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "invalid email or password");  // nothing revealed
  ASSERT_TRUE(users_->Enable("ann@example.com", {}));
  EXPECT_TRUE(users_->Verify("ann@example.com", "correct horse"));
  ASSERT_TRUE(users_->Delete("ann@example.com", {}));
  EXPECT_FALSE(users_->Verify("ann@example.com", "correct horse"));
  EXPECT_FALSE(*users_->FindByEmail("ann@example.com"));
  auto again = users_->Create("ann@example.com", "another horse", Role::kEditor, {});
  ASSERT_TRUE(again) << again.error().message;

  for (auto st : {users_->Disable("root@example.com", {}).error(),
                  users_->Delete("root@example.com", {}).error(),
                  users_->SetRole("root@example.com", Role::kEditor, {}).error()})
    EXPECT_EQ(st.code, Errc::kInvalidTransition) << st.message;
  EXPECT_EQ(*users_->CountAdmins(), 1);
  ASSERT_TRUE(users_->SetRole("ann@example.com", Role::kAdministrator, {}));
  EXPECT_TRUE(users_->Disable("root@example.com", {}));
  EXPECT_EQ(*users_->CountAdmins(), 1);
}

TEST_F(UsersTest, EachChangeReachesTheAuditHookInItsTransaction) {
  std::vector<std::string> audited;
  Users users(*db_, clock_,
              [&](store::Conn&, const PersonChanger& by, const PersonChange& change) -> Status {
                if (change.action == "delete_user" && by.subject == "refuse")
                  return Fail(Errc::kInternal, "audit down");
                audited.push_back(by.kind + ":" + change.action);
                return Ok();
              });
  ASSERT_TRUE(users.Create("gus@example.com", "correct horse", Role::kEditor, {.kind = "cli"}));
  ASSERT_TRUE(users.SetPassword("gus@example.com", "another horse", {.kind = "cli"}));
  ASSERT_TRUE(users.SetRole("gus@example.com", Role::kViewer, {.kind = "cli"}));
  // An audit row that cannot be written undoes the change.
  EXPECT_FALSE(users.Delete("gus@example.com", {.kind = "cli", .subject = "refuse"}));
  EXPECT_TRUE(*users.FindByEmail("gus@example.com"));
  EXPECT_EQ(audited, (std::vector<std::string>{"cli:create_user", "cli:change_password",
                                               "cli:change_role"}));
}

TEST_F(UsersTest, RateLimiterRefusesOverTheLimitUntilTheWindowEnds) {
  RateLimiter limiter(*db_, clock_);
  RateLimit limit{.limit = 3, .window_s = 60};
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Hit("b", limit)->allowed) << i;
  auto over = limiter.Hit("b", limit);
  ASSERT_TRUE(over);
  EXPECT_FALSE(over->allowed);
  EXPECT_EQ(over->retry_after, 60);
  EXPECT_FALSE(limiter.Check("b", limit)->allowed);
  EXPECT_TRUE(limiter.Check("other", limit)->allowed);
  clock_.Advance(30);
  EXPECT_EQ(limiter.Hit("b", limit)->retry_after, 30);
  clock_.Advance(31);
  EXPECT_TRUE(limiter.Hit("b", limit)->allowed);
  ASSERT_TRUE(limiter.Reset("b"));
  EXPECT_EQ(limiter.Check("b", limit)->count, 0);
}

}  // namespace
}  // namespace crmd::auth

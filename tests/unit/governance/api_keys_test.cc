#include "src/governance/api_keys.h"

#include <gtest/gtest.h>

#include "src/core/crypto.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_server.h"

namespace crmd::governance {
namespace {

class ApiKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<crmd::testing::ScratchDatabase>(dir_.path() + "/t.db", false,
                                                                /*migrated=*/true);
    auto db = store::Open(scratch_->url(), 1);
    ASSERT_TRUE(db.has_value()) << db.error().detail;
    db_ = std::move(*db);
    keys_ = std::make_unique<governance::ApiKeys>(*db_, clock_, random_);
  }
  crmd::testing::TempDir dir_;
  std::unique_ptr<crmd::testing::ScratchDatabase> scratch_;  // SQLite file or PostgreSQL database
  std::unique_ptr<store::Database> db_;
  FakeClock clock_;
  SecureRandom random_;
  std::unique_ptr<governance::ApiKeys> keys_;
};

TEST_F(ApiKeysTest, CreatedKeyHasVisiblePrefixAndAuthenticates) {
  auto k = keys_->Create("zapier");
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->key.prefix.rfind("crmd_live_", 0), 0u);
  EXPECT_EQ(k->key.prefix.size(), governance::ApiKeys::kPrefixLength);
  EXPECT_EQ(k->secret.rfind(k->key.prefix + "_", 0), 0u);
  auto a = keys_->Authenticate(k->secret);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->id, k->key.id);
  EXPECT_EQ(a->name, "zapier");
}

TEST_F(ApiKeysTest, StoresOnlyTheHashOfTheKey) {
  auto k = keys_->Create("n");
  ASSERT_TRUE(k.has_value());
  auto stored = db_->Read([&](store::Conn& c) -> Result<std::string> {
    auto row = c.QueryOne("SELECT secret_hash FROM api_keys WHERE id = ?", {k->key.id});
    if (!row) return Fail(row.error());
    return (*row)->Str(0);
  });
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(*stored, crypto::HashSecret(k->secret));
  EXPECT_EQ(stored->find(k->secret.substr(19)), std::string::npos);
}

TEST_F(ApiKeysTest, WrongSecretWithRightPrefixIsRejected) {
  auto k = keys_->Create("n");
  ASSERT_TRUE(k.has_value());
  std::string forged = k->key.prefix + "_" + std::string(43, 'A');
  auto a = keys_->Authenticate(forged);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().code, Errc::kUnauthenticated);
  EXPECT_FALSE(keys_->Authenticate("garbage").has_value());
  EXPECT_FALSE(keys_->Authenticate("").has_value());
}

TEST_F(ApiKeysTest, DisabledKeyIsRejectedImmediatelyAndReenableRestores) {
  auto k = keys_->Create("n");
  ASSERT_TRUE(k.has_value());
  ASSERT_TRUE(keys_->Authenticate(k->secret).has_value());
  ASSERT_TRUE(keys_->SetEnabled(k->key.id, false).has_value());
  auto a = keys_->Authenticate(k->secret);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().message, "API key disabled");
  ASSERT_TRUE(keys_->SetEnabled(k->key.id, true).has_value());
  EXPECT_TRUE(keys_->Authenticate(k->secret).has_value());
}

TEST_F(ApiKeysTest, DeletedKeyIsRejected) {
  auto k = keys_->Create("n");
  ASSERT_TRUE(k.has_value());
  ASSERT_TRUE(keys_->Delete(k->key.id).has_value());
  EXPECT_FALSE(keys_->Authenticate(k->secret).has_value());
  EXPECT_EQ(keys_->Delete(k->key.id).error().code, Errc::kNotFound);
}

TEST_F(ApiKeysTest, LastUsedIsWrittenAtMostOncePerMinute) {
  auto k = keys_->Create("n");
  ASSERT_TRUE(k.has_value());
  const int64_t t0 = clock_.NowUnix();
  ASSERT_TRUE(keys_->Authenticate(k->secret).has_value());
  EXPECT_EQ(keys_->Get(k->key.id)->last_used_at, t0);
  clock_.Advance(30);
  ASSERT_TRUE(keys_->Authenticate(k->secret).has_value());
  EXPECT_EQ(keys_->Get(k->key.id)->last_used_at, t0);
  clock_.Advance(31);
  ASSERT_TRUE(keys_->Authenticate(k->secret).has_value());
  EXPECT_EQ(keys_->Get(k->key.id)->last_used_at, t0 + 61);
}

TEST_F(ApiKeysTest, ListNeverContainsTheSecret) {
  auto k = keys_->Create("n", governance::ApiKeyRole::kAdmin);
  ASSERT_TRUE(k.has_value());
  auto list = keys_->List();
  ASSERT_TRUE(list.has_value());
  ASSERT_EQ(list->size(), 1u);
  auto j = governance::ApiKeyJson(list->front());
  EXPECT_EQ(j["role"], "admin");
  EXPECT_EQ(j.dump().find(k->secret), std::string::npos);
}

TEST(ApiKeyPrefix, RejectsMisshapenKeys) {
  EXPECT_FALSE(governance::ApiKeyPrefix("crmd_live_abcdefgh").has_value());
  EXPECT_FALSE(governance::ApiKeyPrefix("other_live_abcdefg_xxxxx").has_value());
  EXPECT_FALSE(governance::ApiKeyPrefix("crmd_live_abcdefghXxxxxx").has_value());
  EXPECT_EQ(governance::ApiKeyPrefix("crmd_live_abcdefgh_secret").value_or(""),
            "crmd_live_abcdefgh");
}

}  // namespace
}  // namespace crmd::governance

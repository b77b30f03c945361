// The auth repositories' contracts (auth/repo/*.h), checked on the engine the suite runs
// on: SQLite by default, PostgreSQL under the `pg.` prefix (tests/support/test_database.h).
// One fixture per repository; each test names the promise it checks.
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "auth/rate_limit.h"
#include "auth/repo/authorization_requests_repo.h"
#include "auth/repo/clients_repo.h"
#include "auth/repo/codes_repo.h"
#include "auth/repo/consents_repo.h"
#include "auth/repo/grants_repo.h"
#include "auth/repo/login_sessions_repo.h"
#include "auth/repo/rate_limits_repo.h"
#include "auth/repo/signing_keys_repo.h"
#include "auth/repo/tokens_repo.h"
#include "auth/repo/users_repo.h"
#include "src/core/clock.h"
#include "src/store/db.h"
#include "tests/support/test_database.h"
#include "tests/support/test_server.h"

namespace crmd::auth::repo {
namespace {

using crmd::testing::ScratchDatabase;
using crmd::testing::TempDir;

constexpr int64_t kNow = 1'760'000'000;

class AuthRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<ScratchDatabase>(dir_.path() + "/auth.db");
    auto opened = store::Open(scratch_->url(), 4);
    ASSERT_TRUE(opened) << opened.error().message << " " << opened.error().detail;
    db_ = std::move(*opened);
  }

  // Runs `f` in a write transaction and answers its result.
  template <typename F>
  auto W(F&& f) {
    return db_->Write(std::forward<F>(f));
  }
  template <typename F>
  auto R(F&& f) {
    return db_->Read(std::forward<F>(f));
  }

  int64_t AddUser(const std::string& email, bool admin = false) {
    auto id = W([&](store::Conn& c) { return InsertUser(c, email, "hash-" + email, admin, kNow); });
    EXPECT_TRUE(id) << id.error().detail;
    return id ? *id : 0;
  }

  static Client MakeClient(const std::string& id) {
    Client c;
    c.client_id = id;
    c.client_name = "App " + id;
    c.redirect_uris = {"https://app.example/cb"};
    c.grant_types = {"authorization_code", "refresh_token"};
    c.metadata_json = R"({"scope":"contacts:read"})";
    c.created_at = kNow;
    c.updated_at = kNow;
    return c;
  }

  TempDir dir_;
  std::unique_ptr<ScratchDatabase> scratch_;
  std::unique_ptr<store::Database> db_;
};

// ---------------------------------------------------------------------------------------
// clients_repo.h

TEST_F(AuthRepo, ClientsInsertedClientIsFoundWithItsHashes) {
  ASSERT_TRUE(W([&](store::Conn& c) {
    return InsertClient(c, MakeClient("c1"), std::string("secret-hash"), std::string("reg-hash"));
  }));
  auto found = R([&](store::Conn& c) { return FindClient(c, "c1"); });
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->client.client_name, "App c1");
  EXPECT_EQ((*found)->client.redirect_uris, std::vector<std::string>{"https://app.example/cb"});
  EXPECT_EQ((*found)->client.grant_types.size(), 2u);
  EXPECT_EQ((*found)->client.RegisteredScope(), "contacts:read");
  EXPECT_EQ((*found)->secret_hash, "secret-hash");
  EXPECT_EQ((*found)->registration_token_hash, "reg-hash");
  auto none = R([&](store::Conn& c) { return FindClient(c, "nobody"); });
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST_F(AuthRepo, ClientsDuplicateClientIdIsAlreadyExists) {
  ASSERT_TRUE(W([&](store::Conn& c) {
    return InsertClient(c, MakeClient("dup"), std::nullopt, std::nullopt);
  }));
  auto again = W([&](store::Conn& c) {
    return InsertClient(c, MakeClient("dup"), std::nullopt, std::nullopt);
  });
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::kAlreadyExists);
  auto all = R([&](store::Conn& c) { return ListClients(c); });
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 1u);
}

TEST_F(AuthRepo, ClientsSingleClientOperationsAnswerZeroForAnUnknownClient) {
  auto n = W([&](store::Conn& c) -> Result<int64_t> {
    int64_t total = 0;
    for (auto r : {UpdateClientMetadata(c, MakeClient("ghost"), kNow), DeleteClient(c, "ghost"),
                   MarkClientRevoked(c, "ghost", kNow), SetAllowedScopes(c, "ghost", "x", kNow),
                   SetRegistrationTokenHash(c, "ghost", "h")}) {
      if (!r) return r;
      total += *r;
    }
    return total;
  });
  ASSERT_TRUE(n) << n.error().detail;
  EXPECT_EQ(*n, 0);
}

TEST_F(AuthRepo, ClientsUpdatesChangeOneRowAndSecretCanBeCleared) {
  ASSERT_TRUE(W([&](store::Conn& c) {
    return InsertClient(c, MakeClient("c1"), std::string("s"), std::nullopt);
  }));
  Client changed = MakeClient("c1");
  changed.client_name = "Renamed";
  auto n = W([&](store::Conn& c) -> Result<int64_t> {
    auto u = UpdateClientMetadata(c, changed, kNow + 5);
    if (!u) return u;
    if (auto st = SetClientSecretHash(c, "c1", std::nullopt); !st) return Fail(st.error());
    if (auto s = SetAllowedScopes(c, "c1", "contacts:read", kNow + 6); !s) return s;
    if (auto s = SetRegistrationTokenHash(c, "c1", "reg2"); !s) return s;
    return MarkClientRevoked(c, "c1", kNow + 7);
  });
  ASSERT_TRUE(n) << n.error().detail;
  EXPECT_EQ(*n, 1);
  auto found = R([&](store::Conn& c) { return FindClient(c, "c1"); });
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->client.client_name, "Renamed");
  EXPECT_EQ((*found)->secret_hash, "");
  EXPECT_EQ((*found)->registration_token_hash, "reg2");
  EXPECT_EQ((*found)->client.allowed_scopes, "contacts:read");
  EXPECT_TRUE((*found)->client.revoked);
  EXPECT_EQ((*found)->client.updated_at, kNow + 7);
  auto creds = R([&](store::Conn& c) { return FindClientCredentials(c, "c1"); });
  ASSERT_TRUE(creds && *creds);
  EXPECT_FALSE((*creds)->secret_hash);
  EXPECT_TRUE((*creds)->revoked);
  auto gone = W([&](store::Conn& c) { return DeleteClient(c, "c1"); });
  ASSERT_TRUE(gone);
  EXPECT_EQ(*gone, 1);
}

TEST_F(AuthRepo, ClientsCimdUpsertKeepsRevokedAndCreatedAt) {
  Client cimd = MakeClient("https://app.example/client.json");
  cimd.source = "cimd";
  cimd.token_endpoint_auth_method = "none";
  ASSERT_TRUE(W([&](store::Conn& c) { return UpsertCimdClient(c, cimd); }));
  ASSERT_TRUE(W([&](store::Conn& c) { return MarkClientRevoked(c, cimd.client_id, kNow + 1); }));
  cimd.client_name = "Refreshed";
  cimd.created_at = kNow + 100;
  cimd.updated_at = kNow + 100;
  ASSERT_TRUE(W([&](store::Conn& c) { return UpsertCimdClient(c, cimd); }));
  auto found = R([&](store::Conn& c) { return FindClient(c, cimd.client_id); });
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->client.client_name, "Refreshed");
  EXPECT_EQ((*found)->client.source, "cimd");
  EXPECT_TRUE((*found)->client.revoked);
  EXPECT_EQ((*found)->client.created_at, kNow);
  EXPECT_EQ((*found)->client.updated_at, kNow + 100);
}

// ---------------------------------------------------------------------------------------
// users_repo.h

TEST_F(AuthRepo, UsersDuplicateEmailIsAlreadyExists) {
  int64_t id = AddUser("ada@example.com", true);
  EXPECT_GT(id, 0);
  auto again =
      W([&](store::Conn& c) { return InsertUser(c, "ada@example.com", "h", false, kNow); });
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::kAlreadyExists);
}

TEST_F(AuthRepo, UsersAreFoundByEmailAndIdWithTheirPasswordHash) {
  int64_t ada = AddUser("ada@example.com", true);
  int64_t bob = AddUser("bob@example.com");
  EXPECT_NE(ada, bob);
  auto by_email = R([&](store::Conn& c) { return FindUserByEmail(c, "bob@example.com"); });
  ASSERT_TRUE(by_email && *by_email);
  EXPECT_EQ((*by_email)->id, bob);
  EXPECT_FALSE((*by_email)->is_admin);
  auto by_id = R([&](store::Conn& c) { return FindUserById(c, ada); });
  ASSERT_TRUE(by_id && *by_id);
  EXPECT_EQ((*by_id)->email, "ada@example.com");
  EXPECT_EQ((*by_id)->created_at, kNow);
  auto with_hash =
      R([&](store::Conn& c) { return FindUserWithPasswordHash(c, "ada@example.com"); });
  ASSERT_TRUE(with_hash && *with_hash);
  EXPECT_EQ((*with_hash)->second, "hash-ada@example.com");
  auto missing = R([&](store::Conn& c) { return FindUserByEmail(c, "eve@example.com"); });
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  auto all = R([&](store::Conn& c) { return ListUsers(c); });
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, ada);
  auto admins = R([&](store::Conn& c) { return CountAdmins(c); });
  ASSERT_TRUE(admins);
  EXPECT_EQ(*admins, 1);
}

TEST_F(AuthRepo, UsersSetPasswordHashAnswersZeroForAnUnknownEmail) {
  AddUser("ada@example.com");
  auto n = W([&](store::Conn& c) { return SetPasswordHash(c, "ada@example.com", "new"); });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 1);
  auto none = W([&](store::Conn& c) { return SetPasswordHash(c, "eve@example.com", "new"); });
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0);
  auto with_hash =
      R([&](store::Conn& c) { return FindUserWithPasswordHash(c, "ada@example.com"); });
  ASSERT_TRUE(with_hash && *with_hash);
  EXPECT_EQ((*with_hash)->second, "new");
}

// ---------------------------------------------------------------------------------------
// grants_repo.h and tokens_repo.h

class AuthRepoGrants : public AuthRepo {
 protected:
  GrantRow Grant(const std::string& id, std::optional<int64_t> user,
                 const std::string& client = "c1") {
    return GrantRow{.grant_id = id,
                    .client_id = client,
                    .user_id = user,
                    .scope = "contacts:read",
                    .resource = "https://crm.example/mcp"};
  }
  void AddGrantWithTokens(const GrantRow& g, const std::string& suffix) {
    ASSERT_TRUE(W([&](store::Conn& c) -> Status {
      if (auto st = InsertGrant(c, g, kNow); !st) return st;
      if (auto st = InsertAccessToken(c, "jti-" + suffix, g.grant_id, g.client_id, kNow + 3600);
          !st)
        return st;
      return InsertRefreshToken(c, "rt-" + suffix, g, kNow, kNow + 86400);
    }));
  }
};

TEST_F(AuthRepoGrants, DuplicateGrantIdIsAlreadyExists) {
  ASSERT_TRUE(W([&](store::Conn& c) { return InsertGrant(c, Grant("g1", std::nullopt), kNow); }));
  auto again = W([&](store::Conn& c) { return InsertGrant(c, Grant("g1", std::nullopt), kNow); });
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::kAlreadyExists);
  auto exists = R([&](store::Conn& c) { return GrantExists(c, "g1"); });
  ASSERT_TRUE(exists);
  EXPECT_TRUE(*exists);
  auto missing = R([&](store::Conn& c) { return GrantExists(c, "g2"); });
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
}

TEST_F(AuthRepoGrants, ListShowsThePersonsEmailOrADash) {
  int64_t ada = AddUser("ada@example.com");
  AddGrantWithTokens(Grant("g1", ada), "1");
  AddGrantWithTokens(Grant("g2", std::nullopt, "c2"), "2");
  auto all = R([&](store::Conn& c) { return ListGrants(c, std::nullopt); });
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  auto of_c2 = R([&](store::Conn& c) { return ListGrants(c, std::string("c2")); });
  ASSERT_TRUE(of_c2);
  ASSERT_EQ(of_c2->size(), 1u);
  EXPECT_EQ((*of_c2)[0].user_email, "-");
  auto of_c1 = R([&](store::Conn& c) { return ListGrants(c, std::string("c1")); });
  ASSERT_TRUE(of_c1 && of_c1->size() == 1u);
  EXPECT_EQ((*of_c1)[0].user_email, "ada@example.com");
  EXPECT_FALSE((*of_c1)[0].revoked_at);
}

TEST_F(AuthRepoGrants, RefreshTokenRotationMarksUsedOnce) {
  AddGrantWithTokens(Grant("g1", std::nullopt), "1");
  auto first = W([&](store::Conn& c) { return MarkRefreshTokenUsed(c, "rt-1", kNow + 10); });
  ASSERT_TRUE(first);
  EXPECT_TRUE(*first);
  auto second = W([&](store::Conn& c) { return MarkRefreshTokenUsed(c, "rt-1", kNow + 20); });
  ASSERT_TRUE(second);
  EXPECT_FALSE(*second);
  auto row = R([&](store::Conn& c) { return FindRefreshToken(c, "rt-1"); });
  ASSERT_TRUE(row && *row);
  EXPECT_EQ((*row)->used_at, kNow + 10);
  EXPECT_EQ((*row)->grant_id, "g1");
  EXPECT_EQ((*row)->resource, "https://crm.example/mcp");
  EXPECT_EQ((*row)->expires_at, kNow + 86400);
  EXPECT_FALSE((*row)->grant_revoked_at);
  auto unknown = R([&](store::Conn& c) { return FindRefreshToken(c, "rt-none"); });
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(*unknown);
}

TEST_F(AuthRepoGrants, ConcurrentRotationsOfOneRefreshTokenSucceedOnce) {
  AddGrantWithTokens(Grant("g1", std::nullopt), "1");
  std::atomic<int> wins{0}, failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      auto used = W([&](store::Conn& c) { return MarkRefreshTokenUsed(c, "rt-1", kNow + 1); });
      if (!used)
        ++failures;
      else if (*used)
        ++wins;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(wins.load(), 1);
}

TEST_F(AuthRepoGrants, RevokingAGrantEndsItsWholeFamilyAndIsIdempotent) {
  AddGrantWithTokens(Grant("g1", std::nullopt), "1");
  AddGrantWithTokens(Grant("g2", std::nullopt), "2");
  ASSERT_TRUE(W([&](store::Conn& c) { return RevokeGrant(c, "g1", kNow + 50); }));
  ASSERT_TRUE(W([&](store::Conn& c) { return RevokeGrant(c, "g1", kNow + 60); }));
  auto rt = R([&](store::Conn& c) { return FindRefreshToken(c, "rt-1"); });
  ASSERT_TRUE(rt && *rt);
  EXPECT_EQ((*rt)->grant_revoked_at, kNow + 50);  // the first revocation's time stays
  EXPECT_EQ((*rt)->expires_at, kNow + 50);
  auto revoked = R([&](store::Conn& c) { return AccessTokenRevoked(c, "jti-1"); });
  ASSERT_TRUE(revoked && *revoked);
  EXPECT_TRUE(**revoked);
  auto other = R([&](store::Conn& c) { return AccessTokenRevoked(c, "jti-2"); });
  ASSERT_TRUE(other && *other);
  EXPECT_FALSE(**other);
  auto other_rt = R([&](store::Conn& c) { return FindRefreshToken(c, "rt-2"); });
  ASSERT_TRUE(other_rt && *other_rt);
  EXPECT_EQ((*other_rt)->expires_at, kNow + 86400);
  auto jtis = R([&](store::Conn& c) { return ListRevokedJtis(c, kNow); });
  ASSERT_TRUE(jtis);
  EXPECT_EQ(*jtis, std::vector<std::string>{"jti-1"});
  auto expired = R([&](store::Conn& c) { return ListRevokedJtis(c, kNow + 3600); });
  ASSERT_TRUE(expired);
  EXPECT_TRUE(expired->empty());
}

TEST_F(AuthRepoGrants, AccessTokenRevocationOnlyForItsOwnClient) {
  AddGrantWithTokens(Grant("g1", std::nullopt), "1");
  auto stranger = W([&](store::Conn& c) { return RevokeAccessToken(c, "jti-1", "c2", kNow); });
  ASSERT_TRUE(stranger);
  EXPECT_FALSE(*stranger);
  auto owner = W([&](store::Conn& c) { return RevokeAccessToken(c, "jti-1", "c1", kNow); });
  ASSERT_TRUE(owner);
  EXPECT_TRUE(*owner);
  auto again = W([&](store::Conn& c) { return RevokeAccessToken(c, "jti-1", "c1", kNow + 1); });
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  auto unknown = R([&](store::Conn& c) { return AccessTokenRevoked(c, "jti-none"); });
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(*unknown);
  auto dup = W([&](store::Conn& c) { return InsertAccessToken(c, "jti-1", "g1", "c1", kNow); });
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
}

TEST_F(AuthRepoGrants, LiveGrantIdsAndClientRevocationWithItsUnredeemedCodes) {
  int64_t ada = AddUser("ada@example.com");
  int64_t bob = AddUser("bob@example.com");
  AddGrantWithTokens(Grant("ga", ada), "a");
  AddGrantWithTokens(Grant("gb", bob), "b");
  AddGrantWithTokens(Grant("gc", ada, "c2"), "c");
  auto of_ada = R([&](store::Conn& c) { return LiveGrantIdsOfUser(c, ada); });
  ASSERT_TRUE(of_ada);
  EXPECT_EQ(of_ada->size(), 2u);
  auto code = [&](const std::string& hash, int64_t user) {
    return CodeRow{.code_hash = hash,
                   .client_id = "c1",
                   .user_id = user,
                   .redirect_uri = "https://app.example/cb",
                   .scope = "contacts:read",
                   .resource = "https://crm.example/mcp",
                   .code_challenge = "x",
                   .grant_id = "g-" + hash,
                   .created_at = kNow,
                   .expires_at = kNow + 60};
  };
  ASSERT_TRUE(W([&](store::Conn& c) -> Status {
    for (const auto& row : {code("ca", ada), code("cb", bob), code("cr", ada)})
      if (auto st = InsertCode(c, row); !st) return st;
    auto redeemed = RedeemCode(c, "cr", kNow);
    if (!redeemed) return Fail(redeemed.error());
    return Ok();
  }));
  // Only ada's grants of c1, and only her unredeemed codes.
  ASSERT_TRUE(W([&](store::Conn& c) { return RevokeGrantsOfClient(c, "c1", ada, kNow + 5); }));
  auto live_c1 = R([&](store::Conn& c) { return LiveGrantIdsOfClient(c, "c1"); });
  ASSERT_TRUE(live_c1);
  EXPECT_EQ(*live_c1, std::vector<std::string>{"gb"});
  auto live_c2 = R([&](store::Conn& c) { return LiveGrantIdsOfClient(c, "c2"); });
  ASSERT_TRUE(live_c2);
  EXPECT_EQ(*live_c2, std::vector<std::string>{"gc"});
  auto codes = R([&](store::Conn& c) -> Result<std::vector<bool>> {
    std::vector<bool> present;
    for (const char* h : {"ca", "cb", "cr"}) {
      auto f = FindCode(c, h);
      if (!f) return Fail(f.error());
      present.push_back(f->has_value());
    }
    return present;
  });
  ASSERT_TRUE(codes);
  EXPECT_EQ(*codes, (std::vector<bool>{false, true, true}));
  // Every grant of the client, all users.
  ASSERT_TRUE(
      W([&](store::Conn& c) { return RevokeGrantsOfClient(c, "c1", std::nullopt, kNow + 6); }));
  auto none = R([&](store::Conn& c) { return LiveGrantIdsOfClient(c, "c1"); });
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  auto all_ids = R([&](store::Conn& c) { return GrantIdsOfClient(c, "c1", std::nullopt); });
  ASSERT_TRUE(all_ids);
  EXPECT_EQ(all_ids->size(), 2u);
}

// ---------------------------------------------------------------------------------------
// codes_repo.h

class AuthRepoCodes : public AuthRepo {
 protected:
  void SetUp() override {
    AuthRepo::SetUp();
    user_ = AddUser("ada@example.com");
    row_ = CodeRow{.code_hash = "code-hash",
                   .client_id = "c1",
                   .user_id = user_,
                   .redirect_uri = "https://app.example/cb",
                   .scope = "contacts:read",
                   .resource = "https://crm.example/mcp",
                   .code_challenge = "challenge",
                   .grant_id = "g1",
                   .created_at = kNow,
                   .expires_at = kNow + 60};
    ASSERT_TRUE(W([&](store::Conn& c) { return InsertCode(c, row_); }));
  }
  int64_t user_ = 0;
  CodeRow row_;
};

TEST_F(AuthRepoCodes, StoredCodeIsFoundWithItsBindings) {
  auto found = R([&](store::Conn& c) { return FindCode(c, "code-hash"); });
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->client_id, "c1");
  EXPECT_EQ((*found)->user_id, user_);
  EXPECT_EQ((*found)->redirect_uri, "https://app.example/cb");
  EXPECT_EQ((*found)->code_challenge, "challenge");
  EXPECT_EQ((*found)->grant_id, "g1");
  EXPECT_EQ((*found)->expires_at, kNow + 60);
  EXPECT_FALSE((*found)->redeemed_at);
  auto unknown = R([&](store::Conn& c) { return FindCode(c, "other"); });
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(*unknown);
}

TEST_F(AuthRepoCodes, DuplicateCodeHashIsAlreadyExists) {
  auto again = W([&](store::Conn& c) { return InsertCode(c, row_); });
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::kAlreadyExists);
}

TEST_F(AuthRepoCodes, SingleUseRedeemedTwiceSucceedsOnceAndStaysFindable) {
  auto first = W([&](store::Conn& c) { return RedeemCode(c, "code-hash", kNow + 1); });
  ASSERT_TRUE(first);
  EXPECT_TRUE(*first);
  auto second = W([&](store::Conn& c) { return RedeemCode(c, "code-hash", kNow + 2); });
  ASSERT_TRUE(second);
  EXPECT_FALSE(*second);
  auto found = R([&](store::Conn& c) { return FindCode(c, "code-hash"); });
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->redeemed_at, kNow + 1);
  // A redeemed code is no longer deleted with the client's pending codes.
  ASSERT_TRUE(W([&](store::Conn& c) { return DeleteUnredeemedCodes(c, "c1", std::nullopt); }));
  auto kept = R([&](store::Conn& c) { return FindCode(c, "code-hash"); });
  ASSERT_TRUE(kept);
  EXPECT_TRUE(*kept);
}

TEST_F(AuthRepoCodes, ConcurrentRedemptionsSucceedOnce) {
  std::atomic<int> wins{0}, failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      auto r = W([&](store::Conn& c) { return RedeemCode(c, "code-hash", kNow + 1); });
      if (!r)
        ++failures;
      else if (*r)
        ++wins;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(wins.load(), 1);
}

// ---------------------------------------------------------------------------------------
// signing_keys_repo.h

TEST_F(AuthRepo, SigningKeysRotationRetiresTheOldKeyAndTheNewestSigns) {
  auto none = R([&](store::Conn& c) { return NewestActiveKey(c); });
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  ASSERT_TRUE(W(
      [&](store::Conn& c) { return InsertSigningKey(c, "k1", "pem1", R"({"kid":"k1"})", kNow); }));
  auto first = R([&](store::Conn& c) { return NewestActiveKey(c); });
  ASSERT_TRUE(first && *first);
  EXPECT_EQ((*first)->kid, "k1");
  EXPECT_EQ((*first)->private_pem, "pem1");
  const int64_t later = kNow + 1000, grace = 500;
  ASSERT_TRUE(W([&](store::Conn& c) -> Status {
    if (auto st = RetireActiveKeys(c, later, later + grace); !st) return st;
    return InsertSigningKey(c, "k2", "pem2", R"({"kid":"k2"})", later);
  }));
  auto newest = R([&](store::Conn& c) { return NewestActiveKey(c); });
  ASSERT_TRUE(newest && *newest);
  EXPECT_EQ((*newest)->kid, "k2");
  EXPECT_EQ((*newest)->created_at, later);
  // Newest first; the retired key stays published and trusted through its grace period.
  auto jwks = R([&](store::Conn& c) { return PublishedJwks(c, later); });
  ASSERT_TRUE(jwks);
  EXPECT_EQ(*jwks, (std::vector<std::string>{R"({"kid":"k2"})", R"({"kid":"k1"})"}));
  auto trusted = R([&](store::Conn& c) { return TrustedKeys(c, later + grace - 1); });
  ASSERT_TRUE(trusted);
  ASSERT_EQ(trusted->size(), 2u);
  for (const auto& k : *trusted) {
    if (k.kid == "k1")
      EXPECT_EQ(k.expires_at, later + grace);
    else
      EXPECT_FALSE(k.expires_at);
  }
  auto after = R([&](store::Conn& c) { return TrustedKeys(c, later + grace); });
  ASSERT_TRUE(after);
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].kid, "k2");
  auto published = R([&](store::Conn& c) { return PublishedJwks(c, later + grace); });
  ASSERT_TRUE(published);
  EXPECT_EQ(published->size(), 1u);
}

TEST_F(AuthRepo, SigningKeysTiesAreBrokenByKidAndDuplicateKidIsAlreadyExists) {
  ASSERT_TRUE(W([&](store::Conn& c) -> Status {
    if (auto st = InsertSigningKey(c, "kb", "pem-b", "{}", kNow); !st) return st;
    return InsertSigningKey(c, "ka", "pem-a", "{}", kNow);
  }));
  auto newest = R([&](store::Conn& c) { return NewestActiveKey(c); });
  ASSERT_TRUE(newest && *newest);
  EXPECT_EQ((*newest)->kid, "ka");
  auto dup = W([&](store::Conn& c) { return InsertSigningKey(c, "ka", "other", "{}", kNow + 1); });
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
}

// ---------------------------------------------------------------------------------------
// consents_repo.h

TEST_F(AuthRepo, ConsentsUpsertRevokeAndReactivate) {
  int64_t ada = AddUser("ada@example.com");
  ASSERT_TRUE(W([&](store::Conn& c) -> Status {
    if (auto st = UpsertConsent(c, "c1", ada, "contacts:read", kNow); !st) return st;
    if (auto st = UpsertConsent(c, "c1", ada, "contacts:read", kNow + 1); !st)
      return st;  // same set: one row
    return UpsertConsent(c, "c1", ada, "contacts:read contacts:write", kNow + 2);
  }));
  auto live = R([&](store::Conn& c) { return LiveConsentScopes(c, "c1", ada); });
  ASSERT_TRUE(live);
  EXPECT_EQ(live->size(), 2u);
  auto n = W([&](store::Conn& c) { return RevokeConsents(c, "c1", ada, kNow + 3); });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 2);
  auto again = W([&](store::Conn& c) { return RevokeConsents(c, "c1", ada, kNow + 4); });
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, 0);
  auto after = R([&](store::Conn& c) { return LiveConsentScopes(c, "c1", ada); });
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->empty());
  ASSERT_TRUE(
      W([&](store::Conn& c) { return UpsertConsent(c, "c1", ada, "contacts:read", kNow + 5); }));
  auto list = R([&](store::Conn& c) { return ListConsents(c); });
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].scope, "contacts:read");  // newest first
  EXPECT_EQ((*list)[0].user_email, "ada@example.com");
  EXPECT_FALSE((*list)[0].revoked_at);
  EXPECT_EQ((*list)[1].revoked_at, kNow + 3);
  ASSERT_TRUE(W([&](store::Conn& c) { return DeleteConsentsOfClient(c, "c1"); }));
  auto empty = R([&](store::Conn& c) { return ListConsents(c); });
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

// ---------------------------------------------------------------------------------------
// authorization_requests_repo.h

TEST_F(AuthRepo, PendingRequestsExpireAndAreConsumedOnce) {
  PendingRequestRow row{.id_hash = "h1",
                        .browser_hash = "b",
                        .csrf_hash = "csrf",
                        .client_id = "c1",
                        .redirect_uri = "https://app.example/cb",
                        .scope = "contacts:read",
                        .resource = "https://crm.example/mcp",
                        .state = std::nullopt,
                        .code_challenge = "x",
                        .created_at = kNow,
                        .expires_at = kNow + 600};
  ASSERT_TRUE(W([&](store::Conn& c) { return InsertPendingRequest(c, row); }));
  auto dup = W([&](store::Conn& c) { return InsertPendingRequest(c, row); });
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
  ASSERT_TRUE(W([&](store::Conn& c) { return SetPendingCsrfHash(c, "h1", "csrf2"); }));
  auto found = R([&](store::Conn& c) { return FindPendingRequest(c, "h1", kNow + 599); });
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->csrf_hash, "csrf2");
  EXPECT_EQ((*found)->browser_hash, "b");
  EXPECT_FALSE((*found)->state);
  auto expired = R([&](store::Conn& c) { return FindPendingRequest(c, "h1", kNow + 600); });
  ASSERT_TRUE(expired);
  EXPECT_FALSE(*expired);
  auto once = W([&](store::Conn& c) { return ConsumePendingRequest(c, "h1"); });
  ASSERT_TRUE(once);
  EXPECT_EQ(*once, 1);
  auto twice = W([&](store::Conn& c) { return ConsumePendingRequest(c, "h1"); });
  ASSERT_TRUE(twice);
  EXPECT_EQ(*twice, 0);
  row.id_hash = "h2";
  row.state = "st";
  ASSERT_TRUE(W([&](store::Conn& c) { return InsertPendingRequest(c, row); }));
  auto with_state = R([&](store::Conn& c) { return FindPendingRequest(c, "h2", kNow); });
  ASSERT_TRUE(with_state && *with_state);
  EXPECT_EQ((*with_state)->state, "st");
  ASSERT_TRUE(W([&](store::Conn& c) { return DeleteExpiredRequests(c, kNow + 600); }));
  auto swept = W([&](store::Conn& c) { return ConsumePendingRequest(c, "h2"); });
  ASSERT_TRUE(swept);
  EXPECT_EQ(*swept, 0);
}

// ---------------------------------------------------------------------------------------
// login_sessions_repo.h

TEST_F(AuthRepo, LoginSessionsAreLiveUntilTheyExpire) {
  int64_t ada = AddUser("ada@example.com");
  int64_t bob = AddUser("bob@example.com");
  auto session = [&](const std::string& id, int64_t user, int64_t expires) {
    return LoginSession{.id_hash = id,
                        .user_id = user,
                        .csrf_token = "csrf-" + id,
                        .created_at = kNow,
                        .expires_at = expires};
  };
  ASSERT_TRUE(W([&](store::Conn& c) -> Status {
    for (const auto& s : {session("s1", ada, kNow + 100), session("s2", ada, kNow + 10),
                          session("s3", bob, kNow + 100)})
      if (auto st = InsertSession(c, s); !st) return st;
    return Ok();
  }));
  auto dup = W([&](store::Conn& c) { return InsertSession(c, session("s1", bob, kNow + 5)); });
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
  auto live = R([&](store::Conn& c) { return FindLiveSession(c, "s1", kNow + 99); });
  ASSERT_TRUE(live && *live);
  EXPECT_EQ((*live)->user_id, ada);
  EXPECT_EQ((*live)->csrf_token, "csrf-s1");
  auto expired = R([&](store::Conn& c) { return FindLiveSession(c, "s2", kNow + 10); });
  ASSERT_TRUE(expired);
  EXPECT_FALSE(*expired);
  ASSERT_TRUE(W([&](store::Conn& c) { return DeleteExpiredSessions(c, kNow + 10); }));
  auto swept = R([&](store::Conn& c) { return FindLiveSession(c, "s2", kNow); });
  ASSERT_TRUE(swept);
  EXPECT_FALSE(*swept);
  ASSERT_TRUE(W([&](store::Conn& c) { return DeleteSession(c, "s1"); }));
  auto deleted = R([&](store::Conn& c) { return FindLiveSession(c, "s1", kNow); });
  ASSERT_TRUE(deleted);
  EXPECT_FALSE(*deleted);
  ASSERT_TRUE(W([&](store::Conn& c) { return DeleteSessionsOf(c, bob); }));
  auto bobs = R([&](store::Conn& c) { return FindLiveSession(c, "s3", kNow); });
  ASSERT_TRUE(bobs);
  EXPECT_FALSE(*bobs);
}

// ---------------------------------------------------------------------------------------
// rate_limits_repo.h

TEST_F(AuthRepo, RateLimitWindowArithmetic) {
  auto unknown = R([&](store::Conn& c) { return CurrentWindow(c, "ip:1", 60, kNow); });
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->start, kNow);
  EXPECT_EQ(unknown->count, 0);
  ASSERT_TRUE(
      W([&](store::Conn& c) { return StoreWindow(c, "ip:1", {.start = kNow, .count = 3}); }));
  ASSERT_TRUE(
      W([&](store::Conn& c) { return StoreWindow(c, "ip:1", {.start = kNow, .count = 4}); }));
  auto inside = R([&](store::Conn& c) { return CurrentWindow(c, "ip:1", 60, kNow + 59); });
  ASSERT_TRUE(inside);
  EXPECT_EQ(inside->start, kNow);
  EXPECT_EQ(inside->count, 4);
  // start + window_s == now: the window has run out, a fresh one starts now.
  auto fresh = R([&](store::Conn& c) { return CurrentWindow(c, "ip:1", 60, kNow + 60); });
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->start, kNow + 60);
  EXPECT_EQ(fresh->count, 0);
  ASSERT_TRUE(W([&](store::Conn& c) { return DeleteBucket(c, "ip:1"); }));
  auto reset = R([&](store::Conn& c) { return CurrentWindow(c, "ip:1", 60, kNow + 1); });
  ASSERT_TRUE(reset);
  EXPECT_EQ(reset->start, kNow + 1);
  EXPECT_EQ(reset->count, 0);
}

TEST_F(AuthRepo, RateLimiterRefusesOverTheLimitUntilTheWindowEnds) {
  FakeClock clock(kNow);
  RateLimiter limiter(*db_, clock);
  const RateLimit limit{.limit = 2, .window_s = 60};
  for (int i = 1; i <= 2; ++i) {
    auto d = limiter.Hit("login:ada", limit);
    ASSERT_TRUE(d);
    EXPECT_TRUE(d->allowed);
    EXPECT_EQ(d->count, i);
  }
  clock.Advance(20);
  auto refused = limiter.Hit("login:ada", limit);
  ASSERT_TRUE(refused);
  EXPECT_FALSE(refused->allowed);
  EXPECT_EQ(refused->count, 2);  // a refused event is not counted
  EXPECT_EQ(refused->retry_after, 40);
  clock.Advance(40);
  auto next = limiter.Hit("login:ada", limit);
  ASSERT_TRUE(next);
  EXPECT_TRUE(next->allowed);
  EXPECT_EQ(next->count, 1);
}

// ---------------------------------------------------------------------------------------
// Housekeeping sweeps (src/app/housekeeping.cc): each deletes exactly the rows at or
// before its cutoff and answers how many.

TEST_F(AuthRepoGrants, HousekeepingSweepsDeleteUpToTheCutoffOnly) {
  int64_t ada = AddUser("ada@example.com");
  GrantRow g = Grant("g1", ada);
  ASSERT_TRUE(W([&](store::Conn& c) -> Status {
    if (auto st = InsertGrant(c, g, kNow); !st) return st;
    for (int64_t i = 0; i < 2; ++i) {
      const std::string n = std::to_string(i);
      const int64_t expires = kNow + 100 * (i + 1);  // kNow+100, kNow+200
      if (auto st = InsertAccessToken(c, "jti" + n, "g1", "c1", expires); !st) return st;
      if (auto st = InsertRefreshToken(c, "rt" + n, g, kNow, expires); !st) return st;
      if (auto st = InsertCode(c, {.code_hash = "code" + n,
                                   .client_id = "c1",
                                   .user_id = ada,
                                   .redirect_uri = "https://app.example/cb",
                                   .scope = "s",
                                   .resource = "r",
                                   .code_challenge = "x",
                                   .grant_id = "cg" + n,
                                   .created_at = kNow,
                                   .expires_at = expires});
          !st)
        return st;
      if (auto st = InsertSession(c, {.id_hash = "s" + n,
                                      .user_id = ada,
                                      .csrf_token = "t",
                                      .created_at = kNow,
                                      .expires_at = expires});
          !st)
        return st;
      if (auto st = InsertPendingRequest(c, {.id_hash = "p" + n,
                                             .browser_hash = "b",
                                             .csrf_hash = "c",
                                             .client_id = "c1",
                                             .redirect_uri = "u",
                                             .scope = "s",
                                             .resource = "r",
                                             .code_challenge = "x",
                                             .created_at = kNow,
                                             .expires_at = expires});
          !st)
        return st;
      if (auto st = StoreWindow(c, "b" + n, {.start = expires, .count = 1}); !st) return st;
    }
    return Ok();
  }));
  auto swept = W([&](store::Conn& c) -> Result<std::vector<int64_t>> {
    std::vector<int64_t> out;
    for (auto fn : {DeleteAccessTokensExpiredBy, DeleteRefreshTokensExpiredBy, DeleteCodesExpiredBy,
                    DeleteExpiredSessions, DeleteExpiredRequests, DeleteWindowsStartedBy}) {
      auto n = fn(c, kNow + 100);
      if (!n) return Fail(n.error());
      out.push_back(*n);
    }
    return out;
  });
  ASSERT_TRUE(swept) << swept.error().detail;
  EXPECT_EQ(*swept, std::vector<int64_t>(6, 1));
  auto left = R([&](store::Conn& c) -> Result<std::vector<bool>> {
    auto rt = FindRefreshToken(c, "rt1");
    auto code = FindCode(c, "code1");
    auto session = FindLiveSession(c, "s1", kNow);
    auto pending = FindPendingRequest(c, "p1", kNow);
    auto jti = AccessTokenRevoked(c, "jti1");
    if (!rt || !code || !session || !pending || !jti) return Fail(Errc::kInternal, "lookup failed");
    return std::vector<bool>{rt->has_value(), code->has_value(), session->has_value(),
                             pending->has_value(), jti->has_value()};
  });
  ASSERT_TRUE(left);
  EXPECT_EQ(*left, std::vector<bool>(5, true));
}

}  // namespace
}  // namespace crmd::auth::repo

// The auth repositories' contracts for grants, authorization codes, refresh and access
// tokens, and their housekeeping sweeps (auth/repo/*.h). Each test names the promise it
// checks.
#include "tests/contract/auth_repo_fixture.h"

namespace crmd::auth::repo {
namespace {

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
  auto revoke = [&](const std::string& jti, const std::string& client, int64_t at) {
    return W(
        [&](store::Conn& c) { return RevokeAccessToken(c, jti, "g1", client, kNow + 3600, at); });
  };
  auto stranger = revoke("jti-1", "c2", kNow);
  ASSERT_TRUE(stranger);
  EXPECT_FALSE(*stranger);
  auto owner = revoke("jti-1", "c1", kNow);
  ASSERT_TRUE(owner);
  EXPECT_TRUE(*owner);
  auto again = revoke("jti-1", "c1", kNow + 1);
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  auto unknown = R([&](store::Conn& c) { return AccessTokenRevoked(c, "jti-none"); });
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(*unknown);
  auto dup = W([&](store::Conn& c) { return InsertAccessToken(c, "jti-1", "g1", "c1", kNow); });
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
}

// A client_credentials token has no record until it is revoked: revoking records it.
TEST_F(AuthRepoGrants, RevokingAnUnrecordedAccessTokenRecordsItRevoked) {
  ASSERT_TRUE(W([&](store::Conn& c) { return InsertGrant(c, Grant("g1", std::nullopt), kNow); }));
  auto first = W([&](store::Conn& c) {
    return RevokeAccessToken(c, "jti-cc", "g1", "c1", kNow + 3600, kNow + 5);
  });
  ASSERT_TRUE(first);
  EXPECT_TRUE(*first);
  auto revoked = R([&](store::Conn& c) { return AccessTokenRevoked(c, "jti-cc"); });
  ASSERT_TRUE(revoked && *revoked);
  EXPECT_TRUE(**revoked);
  auto jtis = R([&](store::Conn& c) { return ListRevokedJtis(c, kNow); });
  ASSERT_TRUE(jtis);
  EXPECT_EQ(*jtis, std::vector<std::string>{"jti-cc"});
  auto again = W([&](store::Conn& c) {
    return RevokeAccessToken(c, "jti-cc", "g1", "c1", kNow + 3600, kNow + 9);
  });
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
}

// client_credentials requests join the live grant of the same client, scope and resource.
TEST_F(AuthRepoGrants, FindLiveClientGrantMatchesClientScopeAndResourceOfLiveGrantsOnly) {
  int64_t ada = AddUser("ada@example.com");
  ASSERT_TRUE(W([&](store::Conn& c) -> Status {
    if (auto st = InsertGrant(c, Grant("user-grant", ada), kNow); !st) return st;
    if (auto st = InsertGrant(c, Grant("revoked", std::nullopt), kNow); !st) return st;
    if (auto st = RevokeGrant(c, "revoked", kNow + 1); !st) return st;
    return InsertGrant(c, Grant("other-client", std::nullopt, "c2"), kNow);
  }));
  auto find = [&](const std::string& client, const std::string& scope, const std::string& res) {
    return R([&](store::Conn& c) { return FindLiveClientGrant(c, client, scope, res); });
  };
  const std::string res = "https://crm.example/mcp";
  auto none = find("c1", "contacts:read", res);
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none) << "neither a person's grant nor a revoked one is joined";
  ASSERT_TRUE(W([&](store::Conn& c) { return InsertGrant(c, Grant("live", std::nullopt), kNow); }));
  auto live = find("c1", "contacts:read", res);
  ASSERT_TRUE(live && *live);
  EXPECT_EQ(**live, "live");
  auto other_scope = find("c1", "contacts:read contacts:write", res);
  ASSERT_TRUE(other_scope);
  EXPECT_FALSE(*other_scope);
  auto other_resource = find("c1", "contacts:read", "https://other.example/mcp");
  ASSERT_TRUE(other_resource);
  EXPECT_FALSE(*other_resource);

  auto state = [&](const std::string& id) {
    return R([&](store::Conn& c) { return GrantRevoked(c, id); });
  };
  auto s_live = state("live"), s_revoked = state("revoked"), s_none = state("nope");
  ASSERT_TRUE(s_live && *s_live && s_revoked && *s_revoked && s_none);
  EXPECT_FALSE(**s_live);
  EXPECT_TRUE(**s_revoked);
  EXPECT_FALSE(*s_none);
  auto since = R([&](store::Conn& c) { return ListGrantsRevokedSince(c, kNow); });
  ASSERT_TRUE(since);
  EXPECT_EQ(*since, std::vector<std::string>{"revoked"});
  auto later = R([&](store::Conn& c) { return ListGrantsRevokedSince(c, kNow + 2); });
  ASSERT_TRUE(later);
  EXPECT_TRUE(later->empty());
}

// What a new password, disabling or deleting a person ends: their live grants (listed with
// client and scope), their codes not yet redeemed (any client), their consents.
TEST_F(AuthRepoGrants, APersonsLiveGrantsCodesAndConsents) {
  int64_t ada = AddUser("ada@example.com");
  int64_t bob = AddUser("bob@example.com");
  AddGrantWithTokens(Grant("ga", ada), "a");
  AddGrantWithTokens(Grant("gb", bob), "b");
  AddGrantWithTokens(Grant("gc", ada, "c2"), "c");
  ASSERT_TRUE(W([&](store::Conn& c) { return RevokeGrant(c, "gc", kNow); }));
  auto live = R([&](store::Conn& c) { return LiveGrantsOfUser(c, ada); });
  ASSERT_TRUE(live);
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].grant_id, "ga");
  EXPECT_EQ((*live)[0].client_id, "c1");
  EXPECT_EQ((*live)[0].scope, "contacts:read");
  EXPECT_EQ((*live)[0].user_id, ada);

  auto code = [&](const std::string& hash, int64_t user, const std::string& client) {
    return CodeRow{.code_hash = hash,
                   .client_id = client,
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
    for (const auto& row : {code("a1", ada, "c1"), code("a2", ada, "c2"), code("b1", bob, "c1")})
      if (auto st = InsertCode(c, row); !st) return st;
    if (auto st = UpsertConsent(c, "c1", ada, "contacts:read", kNow); !st) return st;
    return UpsertConsent(c, "c1", bob, "contacts:read", kNow);
  }));
  ASSERT_TRUE(W([&](store::Conn& c) -> Status {
    if (auto st = DeleteUnredeemedCodesOfUser(c, ada); !st) return st;
    return DeleteConsentsOfUser(c, ada);
  }));
  auto codes = R([&](store::Conn& c) -> Result<std::vector<bool>> {
    std::vector<bool> present;
    for (const char* h : {"a1", "a2", "b1"}) {
      auto f = FindCode(c, h);
      if (!f) return Fail(f.error());
      present.push_back(f->has_value());
    }
    return present;
  });
  ASSERT_TRUE(codes);
  EXPECT_EQ(*codes, (std::vector<bool>{false, false, true}));
  EXPECT_TRUE(R([&](store::Conn& c) { return LiveConsentScopes(c, "c1", ada); })->empty());
  EXPECT_EQ(R([&](store::Conn& c) { return LiveConsentScopes(c, "c1", bob); })->size(), 1u);
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

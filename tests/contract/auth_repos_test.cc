// The auth repositories' contracts for clients, users, signing keys, consents, pending
// authorization requests, login sessions and rate limits (auth/repo/*.h). Grants, codes
// and tokens are in auth_grant_repos_test.cc. Each test names the promise it checks.
#include "tests/contract/auth_repo_fixture.h"
#include "tests/support/fake_clock.h"

namespace crmd::auth::repo {
namespace {

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
      W([&](store::Conn& c) { return InsertUser(c, "ada@example.com", "h", Role::kEditor, kNow); });
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

TEST_F(AuthRepo, UsersSetPasswordHashAnswersZeroForAnUnknownId) {
  int64_t ada = AddUser("ada@example.com");
  auto n = W([&](store::Conn& c) { return SetPasswordHash(c, ada, "new"); });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 1);
  auto none = W([&](store::Conn& c) { return SetPasswordHash(c, ada + 100, "new"); });
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0);
  auto with_hash =
      R([&](store::Conn& c) { return FindUserWithPasswordHash(c, "ada@example.com"); });
  ASSERT_TRUE(with_hash && *with_hash);
  EXPECT_EQ((*with_hash)->second, "new");
}

// Roles, disabling and deleting: a deleted person keeps their row and id (the audit log
// names it) but frees the email; only active administrators count.
TEST_F(AuthRepo, UsersRolesDisablingAndDeletingKeepTheRow) {
  int64_t ada = AddUser("ada@example.com", true);
  int64_t bob = AddUser("bob@example.com");
  auto found = R([&](store::Conn& c) { return FindUserById(c, bob); });
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->role, Role::kEditor);
  EXPECT_TRUE((*found)->active());
  ASSERT_EQ(*W([&](store::Conn& c) { return SetRole(c, bob, Role::kAdministrator); }), 1);
  EXPECT_EQ(*R([&](store::Conn& c) { return CountAdmins(c); }), 2);
  EXPECT_EQ(*W([&](store::Conn& c) { return LockActiveAdmins(c); }), 2);
  ASSERT_EQ(*W([&](store::Conn& c) { return SetDisabledAt(c, ada, kNow); }), 1);
  EXPECT_EQ(*R([&](store::Conn& c) { return CountAdmins(c); }), 1);
  EXPECT_EQ(*W([&](store::Conn& c) { return LockActiveAdmins(c); }), 1);
  auto disabled = R([&](store::Conn& c) { return FindUserByEmail(c, "ada@example.com"); });
  ASSERT_TRUE(disabled && *disabled);
  EXPECT_EQ((*disabled)->disabled_at, kNow);
  EXPECT_FALSE((*disabled)->active());
  ASSERT_EQ(*W([&](store::Conn& c) { return SetDisabledAt(c, ada, std::nullopt); }), 1);

  ASSERT_EQ(*W([&](store::Conn& c) { return MarkDeleted(c, bob, kNow + 5); }), 1);
  EXPECT_EQ(*W([&](store::Conn& c) { return MarkDeleted(c, bob, kNow + 6); }), 0);
  EXPECT_FALSE(*R([&](store::Conn& c) { return FindUserByEmail(c, "bob@example.com"); }));
  EXPECT_FALSE(*R([&](store::Conn& c) { return FindUserWithPasswordHash(c, "bob@example.com"); }));
  auto gone = R([&](store::Conn& c) { return FindUserById(c, bob); });
  ASSERT_TRUE(gone && *gone);
  EXPECT_EQ((*gone)->deleted_at, kNow + 5);
  EXPECT_EQ((*gone)->email, "deleted:" + std::to_string(bob));
  EXPECT_EQ(R([&](store::Conn& c) { return ListUsers(c); })->size(), 1u);
  EXPECT_EQ(*R([&](store::Conn& c) { return CountAdmins(c); }), 1);
  EXPECT_EQ(*W([&](store::Conn& c) { return SetRole(c, bob, Role::kViewer); }), 0);
  int64_t again = AddUser("bob@example.com");
  EXPECT_GT(again, bob);
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

}  // namespace
}  // namespace crmd::auth::repo

#pragma once
// The fixture of the auth repository contract suites (auth_repos_test.cc: clients, users,
// keys, consents, pending requests, login sessions, rate limits; auth_grant_repos_test.cc:
// grants, codes, tokens and their housekeeping), on the engine the suite runs on: SQLite
// by default, PostgreSQL under the `pg.` prefix (tests/support/test_database.h).
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

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

inline constexpr int64_t kNow = 1'760'000'000;

class AuthRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<crmd::testing::ScratchDatabase>(dir_.path() + "/auth.db");
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
    auto id = W([&](store::Conn& c) {
      return InsertUser(c, email, "hash-" + email, admin ? Role::kAdministrator : Role::kEditor,
                        kNow);
    });
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

  crmd::testing::TempDir dir_;
  std::unique_ptr<crmd::testing::ScratchDatabase> scratch_;
  std::unique_ptr<store::Database> db_;
};

}  // namespace crmd::auth::repo

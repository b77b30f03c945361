// Throttled sign-in, driven over HTTP as a guesser and as the owner would: the OAuth login
// page and the console's sign-in share one throttle (auth/sign_in_throttle.h). The server
// trusts 127.0.0.1 as a proxy, so each browser plays its own address with X-Forwarded-For.
#include <gtest/gtest.h>

#include <atomic>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/app/services.h"
#include "tests/support/browser.h"

namespace crmd::sign_in_test {
namespace {

using testing::Browser;
using testing::EncodeForm;
using testing::JsonBody;
using testing::Page;
using testing::PkceChallenge;
using testing::TestServer;
using testing::TestServerOptions;

constexpr const char* kRedirect = "http://127.0.0.1:47999/callback";
constexpr const char* kOwner = "owner@example.com";
constexpr const char* kPassword = "correct horse battery staple";
constexpr const char* kGuesserAddress = "203.0.113.7";
constexpr const char* kOwnerAddress = "198.51.100.20";
const std::string kVerifier = "dBjftJeZ4CVP-mJ92K9b3AY5bKqRrl6W5vLpGkXqyBk";

// A 429 whose Retry-After is the first wait (30 seconds after the fifth failure, less the
// time the test took since).
void ExpectWait(const Page& p) {
  auto wait = p.Header("Retry-After");
  ASSERT_TRUE(wait.has_value());
  int seconds = std::stoi(*wait);
  EXPECT_GT(seconds, 0);
  EXPECT_LE(seconds, 30);
}

class SignIn : public ::testing::Test {
 protected:
  SignIn()
      : server_(
            TestServerOptions{.configure = [](Config& c) { c.trusted_proxies = {"127.0.0.1"}; }}) {}

  void SetUp() override {
    auto r = server_.PostJson("/oauth/register", {{"client_name", "Assistant"},
                                                  {"redirect_uris", {kRedirect}},
                                                  {"token_endpoint_auth_method", "none"}});
    ASSERT_EQ(r.status, 201);
    client_id_ = JsonBody(r)["client_id"];
    ASSERT_TRUE(server_.app().services().users->Create(kOwner, kPassword, true));
  }

  std::unique_ptr<Browser> At(const std::string& address) {
    auto b = std::make_unique<Browser>(server_);
    b->set_extra_header("X-Forwarded-For", address);
    return b;
  }

  // The OAuth login page of a fresh authorization request.
  Page OAuthLogin(Browser& b) {
    return b.Get("/oauth/authorize?" + EncodeForm({{"response_type", "code"},
                                                   {"client_id", client_id_},
                                                   {"redirect_uri", kRedirect},
                                                   {"code_challenge", PkceChallenge(kVerifier)},
                                                   {"code_challenge_method", "S256"},
                                                   {"state", "s"}}));
  }
  // Submits the login form on `page` and answers the next page.
  Page TryOAuth(Browser& b, Page& page, const std::string& password) {
    auto form = page.form();
    EXPECT_TRUE(form.has_value()) << page.status << " " << page.body;
    if (!form) return page;
    form->Set("email", kOwner);
    form->Set("password", password);
    return b.Submit(*form);
  }
  Page TryConsole(Browser& b, const std::string& password) {
    return testing::SignInToConsole(b, kOwner, password);
  }

  TestServer server_;
  std::string client_id_;
};

TEST_F(SignIn, TenWrongGuessesFromElsewhereDoNotKeepTheOwnerOut) {
  auto guesser = At(kGuesserAddress);
  Page page = OAuthLogin(*guesser);
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    page = TryOAuth(*guesser, page, "guess " + std::to_string(i));
    if (page.status == 429) ++refused;
  }
  EXPECT_GT(refused, 0);  // the guesser slowed down
  for (int i = 0; i < 10; ++i) {
    Page console = TryConsole(*guesser, "console guess " + std::to_string(i));
    EXPECT_TRUE(console.status == 401 || console.status == 429) << console.status;
  }
  // The owner, at home, gets in on both faces.
  auto owner = At(kOwnerAddress);
  Page login = OAuthLogin(*owner);
  Page consent = TryOAuth(*owner, login, kPassword);
  EXPECT_EQ(consent.status, 200) << consent.body;
  EXPECT_NE(consent.body.find("Allow access?"), std::string::npos) << consent.body;
  auto console = At(kOwnerAddress);
  Page overview = TryConsole(*console, kPassword);
  EXPECT_EQ(overview.status, 200) << overview.body;
  EXPECT_NE(overview.body.find("<h1>Overview</h1>"), std::string::npos) << overview.body;
}

TEST_F(SignIn, AGuesserWaitsWithRetryAfterOnTheOAuthLoginPage) {
  auto guesser = At(kGuesserAddress);
  Page page = OAuthLogin(*guesser);
  for (int i = 0; i < 5; ++i) {
    page = TryOAuth(*guesser, page, "wrong password");
    ASSERT_EQ(page.status, 401) << i;
  }
  page = TryOAuth(*guesser, page, kPassword);  // even the right password waits
  EXPECT_EQ(page.status, 429);
  ExpectWait(page);
  EXPECT_NE(page.body.find("Too many failed sign-in attempts"), std::string::npos);
  EXPECT_FALSE(guesser->Cookie("crmd_session").has_value());
}

TEST_F(SignIn, AGuesserWaitsWithRetryAfterOnTheConsole) {
  auto guesser = At(kGuesserAddress);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(TryConsole(*guesser, "wrong password").status, 401) << i;
  Page limited = TryConsole(*guesser, kPassword);
  EXPECT_EQ(limited.status, 429);
  ExpectWait(limited);
  EXPECT_NE(limited.body.find("Too many failed sign-in attempts"), std::string::npos);
  EXPECT_FALSE(guesser->Cookie("crmd_session").has_value());
}

TEST_F(SignIn, OneAddressSprayingManyAccountsIsStopped) {
  auto sprayer = At(kGuesserAddress);
  int refused = 0;
  for (int i = 0; i < 25; ++i) {
    Page p = testing::SignInToConsole(*sprayer, "person" + std::to_string(i) + "@example.com",
                                      "Winter2026!");
    if (p.status == 429) {
      ++refused;
      EXPECT_TRUE(p.Header("Retry-After").has_value());
    }
  }
  EXPECT_EQ(refused, 5);  // 20 failures per address in a window
  // Someone else is not affected.
  EXPECT_EQ(TryConsole(*At(kOwnerAddress), kPassword).status, 200);
}

// Forty guesses sent at once: each is counted before its password is checked, so no more
// passwords are checked than the throttle allows (five), on both faces.
TEST_F(SignIn, ParallelGuessesGetNoMorePasswordChecksThanTheLimit) {
  // The console: one form, forty POSTs at once.
  Browser console(server_);
  Page login = console.Get("/console/login");
  auto form = login.form();
  ASSERT_TRUE(form.has_value());
  form->Set("email", kOwner);
  form->Set("password", "wrong password");
  const std::string body = EncodeForm(form->Fields());
  const std::string cookie = "crmd_login=" + console.Cookie("crmd_login").value_or("");
  std::atomic<int> checked{0}, limited{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 40; ++i)
    threads.emplace_back([&] {
      // A request that gets no answer counts as a failure here rather than ending the
      // process from its thread.
      try {
        auto r = server_.Send("POST", "/console/login", body,
                              {{"Content-Type", "application/x-www-form-urlencoded"},
                               {"Origin", server_.base_url()},
                               {"Cookie", cookie},
                               {"X-Forwarded-For", kGuesserAddress}});
        (r.status == 401 ? checked : r.status == 429 ? limited : other)++;
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        other++;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(checked.load(), 5);
  EXPECT_EQ(limited.load(), 35);

  // The OAuth login page: forty pending requests, their forms sent at once (another person,
  // from another address: nothing counted above applies).
  ASSERT_TRUE(server_.app().services().users->Create("second@example.com", kPassword, false));
  std::vector<std::unique_ptr<Browser>> browsers;
  std::vector<testing::Form> forms;
  for (int i = 0; i < 40; ++i) {
    browsers.push_back(At(kOwnerAddress));
    Page p = OAuthLogin(*browsers.back());
    auto f = p.form();
    ASSERT_TRUE(f.has_value()) << p.body;
    f->Set("email", "second@example.com");
    f->Set("password", "wrong password");
    forms.push_back(*f);
  }
  std::atomic<int> oauth_checked{0}, oauth_limited{0}, oauth_other{0};
  threads.clear();
  for (int i = 0; i < 40; ++i)
    threads.emplace_back([&, i] {
      try {
        Page p = browsers[i]->Submit(forms[i]);
        (p.status == 401 ? oauth_checked : p.status == 429 ? oauth_limited : oauth_other)++;
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        oauth_other++;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(oauth_other.load(), 0);
  EXPECT_EQ(oauth_checked.load(), 5);
  EXPECT_EQ(oauth_limited.load(), 35);
}

}  // namespace
}  // namespace crmd::sign_in_test

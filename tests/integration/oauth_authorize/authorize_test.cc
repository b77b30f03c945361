// The authorization endpoint, login and consent pages, driven as a browser would.
#include <gtest/gtest.h>

#include "src/app/services.h"
#include "src/core/crypto.h"
#include "tests/support/browser.h"

namespace crmd {
namespace {

using nlohmann::json;
using testing::Browser;
using testing::EncodeForm;
using testing::Form;
using testing::JsonBody;
using testing::Page;
using testing::PkceChallenge;
using testing::QueryParams;
using testing::TestServer;

constexpr const char* kRedirect = "http://127.0.0.1:47999/callback";
constexpr const char* kEmail = "alice@example.com";
constexpr const char* kPassword = "correct horse battery staple";
const std::string kVerifier = "dBjftJeZ4CVP-mJ92K9b3AY5bKqRrl6W5vLpGkXqyBk";

class AuthorizeFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = server_.PostJson("/oauth/register",
                              {{"client_name", "Test <MCP> Client"},
                               {"redirect_uris", {kRedirect}},
                               {"token_endpoint_auth_method", "none"},
                               {"grant_types", {"authorization_code", "refresh_token"}}});
    ASSERT_EQ(r.status, 201);
    client_id_ = JsonBody(r)["client_id"];
    ASSERT_TRUE(server_.app().services().users->Create(kEmail, kPassword, false));
  }

  std::vector<std::pair<std::string, std::string>> Params(
      const std::string& scope = "contacts:read contacts:write") {
    std::vector<std::pair<std::string, std::string>> p = {
        {"response_type", "code"},
        {"client_id", client_id_},
        {"redirect_uri", kRedirect},
        {"code_challenge", PkceChallenge(kVerifier)},
        {"code_challenge_method", "S256"},
        {"state", "xyz-state"},
        {"resource", server_.base_url() + "/mcp"}};
    if (!scope.empty()) p.emplace_back("scope", scope);
    return p;
  }
  static std::vector<std::pair<std::string, std::string>> With(
      std::vector<std::pair<std::string, std::string>> p, const std::string& k,
      const std::string& v) {
    bool found = false;
    for (auto& [key, val] : p)
      if (key == k) val = v, found = true;
    if (!found) p.emplace_back(k, v);
    return p;
  }
  static std::vector<std::pair<std::string, std::string>> Without(
      std::vector<std::pair<std::string, std::string>> p, const std::string& k) {
    std::erase_if(p, [&](const auto& kv) { return kv.first == k; });
    return p;
  }
  Page Start(Browser& b, const std::vector<std::pair<std::string, std::string>>& p) {
    return b.Get("/oauth/authorize?" + EncodeForm(p));
  }
  // Authorize, then sign in; returns the page after the login form.
  Page SignIn(Browser& b, const std::vector<std::pair<std::string, std::string>>& p,
              const std::string& password = kPassword) {
    Page login = Start(b, p);
    EXPECT_EQ(login.status, 200) << login.body;
    auto form = login.form();
    EXPECT_TRUE(form.has_value());
    if (!form) return login;
    form->Set("email", kEmail);
    form->Set("password", password);
    return b.Submit(*form);
  }
  std::optional<std::string> CodeScope(const std::string& code) {
    auto r = server_.app().services().db->Read(
        [&](store::Conn& c) -> Result<std::optional<std::string>> {
          auto row = c.QueryOne("SELECT scope FROM auth_codes WHERE code_hash = ?",
                                {crypto::HashSecret(code)});
          if (!row) return Fail(row.error());
          if (!*row) return std::optional<std::string>();
          return std::optional<std::string>((*row)->Str(0));
        });
    return r ? *r : std::nullopt;
  }

  TestServer server_;
  std::string client_id_;
};

void ExpectRedirectError(const Page& p, const std::string& error, const std::string& issuer) {
  ASSERT_TRUE(p.client_redirect.has_value()) << p.status << " " << p.body;
  EXPECT_EQ(p.client_redirect->rfind(kRedirect, 0), 0u);
  auto q = QueryParams(*p.client_redirect);
  EXPECT_EQ(q["error"], error);
  EXPECT_EQ(q["state"], "xyz-state");
  EXPECT_EQ(q["iss"], issuer);  // RFC 9207
  EXPECT_FALSE(q.count("code"));
}

TEST_F(AuthorizeFlow, FullConsentIssuesACodeWithStateAndIss_Rfc6749_4_1_2_Rfc9207) {
  Browser b(server_);
  Page consent = SignIn(b, Params());
  ASSERT_EQ(consent.status, 200) << consent.body;
  EXPECT_NE(consent.body.find("Test &lt;MCP&gt; Client"), std::string::npos);  // named, escaped
  EXPECT_NE(consent.body.find("127.0.0.1:47999"), std::string::npos);          // redirect host
  auto form = consent.form();
  ASSERT_TRUE(form);
  EXPECT_EQ(form->Options("scope"), (std::vector<std::string>{"contacts:read", "contacts:write"}));
  EXPECT_TRUE(form->Value("csrf_token").has_value());
  Page done = b.Submit(*form, std::make_pair("decision", "allow"));
  ASSERT_TRUE(done.client_redirect) << done.status << done.body;
  EXPECT_EQ(done.status, 303);
  auto q = QueryParams(*done.client_redirect);
  EXPECT_EQ(q["state"], "xyz-state");
  EXPECT_EQ(q["iss"], server_.base_url());
  ASSERT_FALSE(q["code"].empty());
  auto row = server_.app().services().db->Read([&](store::Conn& c) {
    return c.QueryOne(
        "SELECT client_id, redirect_uri, scope, resource, code_challenge, expires_at - created_at, "
        "redeemed_at "
        "FROM auth_codes WHERE code_hash = ?",
        {crypto::HashSecret(q["code"])});
  });
  ASSERT_TRUE(row && *row);
  EXPECT_EQ((*row)->Str(0), client_id_);
  EXPECT_EQ((*row)->Str(1), kRedirect);
  EXPECT_EQ((*row)->Str(2), "contacts:read contacts:write");
  EXPECT_EQ((*row)->Str(3), server_.base_url() + "/mcp");
  EXPECT_EQ((*row)->Str(4), PkceChallenge(kVerifier));
  EXPECT_EQ((*row)->Int(5), server_.app().config().auth_code_ttl);
  EXPECT_TRUE((*row)->IsNull(6));
}

// Errors of a client anyone could have registered are crmd's own page, never a redirect
// to the URI the registrant chose (RFC 9700 §4.11.2).
void ExpectErrorPage(const Page& p, const std::string& error) {
  EXPECT_EQ(p.status, 400) << p.body;
  EXPECT_FALSE(p.client_redirect.has_value()) << *p.client_redirect;
  EXPECT_FALSE(p.Header("Location").has_value());
  EXPECT_NE(p.Header("Content-Type").value_or("").find("text/html"), std::string::npos);
  EXPECT_NE(p.body.find(error), std::string::npos) << p.body;
}

TEST_F(AuthorizeFlow, PlainPkceIsRefusedOnAPage_Rfc7636_4_3) {
  Browser b(server_);
  ExpectErrorPage(Start(b, With(Params(), "code_challenge_method", "plain")), "invalid_request");
  ExpectErrorPage(Start(b, Without(Params(), "code_challenge_method")), "invalid_request");
}

TEST_F(AuthorizeFlow, MissingPkceIsRefusedOnAPage_OAuth21_4_1_1) {
  Browser b(server_);
  ExpectErrorPage(Start(b, Without(Params(), "code_challenge")), "invalid_request");
}

TEST_F(AuthorizeFlow, OtherParameterErrorsOfARegisteredClientAreShownNotRedirected_Rfc9700_4_11_2) {
  Browser b(server_);
  ExpectErrorPage(Start(b, With(Params(), "response_type", "token")), "unsupported_response_type");
  ExpectErrorPage(Start(b, With(Params(), "scope", "contacts:read bogus:scope")), "invalid_scope");
  ExpectErrorPage(Start(b, With(Params(), "resource", "https://other.example.com/mcp")),
                  "invalid_target");
}

// The attack: register a client whose redirect URI is the attacker's, then send people to
// crmd's authorize URL with a request that fails at once. crmd must not bounce them from
// its own host to the attacker's without anybody signing in.
TEST_F(AuthorizeFlow, AnAttackersRegisteredClientCannotUseCrmdAsAnOpenRedirector_Rfc9700_4_11_2) {
  auto reg =
      server_.PostJson("/oauth/register", {{"client_name", "Totally legit"},
                                           {"redirect_uris", {"https://attacker.example/landing"}},
                                           {"token_endpoint_auth_method", "none"}});
  ASSERT_EQ(reg.status, 201) << reg.body;
  const std::string attacker = JsonBody(reg)["client_id"];
  Browser b(server_);
  for (const auto& query : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"client_id", attacker}, {"response_type", "token"}},
           {{"client_id", attacker}, {"response_type", "code"}},  // no PKCE
           {{"client_id", attacker},
            {"response_type", "code"},
            {"code_challenge", PkceChallenge(kVerifier)},
            {"code_challenge_method", "S256"},
            {"scope", "no:such:scope"}},
           {{"client_id", attacker},
            {"response_type", "code"},
            {"code_challenge", PkceChallenge(kVerifier)},
            {"code_challenge_method", "S256"},
            {"prompt", "none"}},
       }) {
    Page p = Start(b, query);
    EXPECT_EQ(p.status, 400) << EncodeForm(query) << "\n" << p.body;
    EXPECT_FALSE(p.client_redirect.has_value())
        << EncodeForm(query) << " -> " << *p.client_redirect;
    EXPECT_FALSE(p.Header("Location").has_value());
  }
}

// prompt=none (docs/oauth-authorize.md): a registered client whose person is signed in and
// has consented gets its code silently; otherwise the answer is a page, not a redirect.
TEST_F(AuthorizeFlow, PromptNoneOfARegisteredClientRedirectsOnlyWithACode) {
  Browser b(server_);
  ExpectErrorPage(Start(b, With(Params(), "prompt", "none")), "login_required");
  Page consent = SignIn(b, Params("contacts:read"));
  ASSERT_EQ(consent.status, 200) << consent.body;
  ExpectErrorPage(Start(b, With(Params("contacts:read"), "prompt", "none")), "consent_required");
  ASSERT_TRUE(b.Submit(*consent.form(), std::make_pair("decision", "allow")).client_redirect);
  Page silent = Start(b, With(Params("contacts:read"), "prompt", "none"));
  ASSERT_TRUE(silent.client_redirect) << silent.status << silent.body;
  EXPECT_FALSE(QueryParams(*silent.client_redirect)["code"].empty());
}

// An operator-made client (source admin) is trusted with its errors, as RFC 6749 §4.1.2.1
// describes.
TEST_F(AuthorizeFlow, ParameterErrorsOfAnOperatorMadeClientAreRedirected_Rfc6749_4_1_2_1) {
  auto& s = server_.app().services();
  auth::Client c;
  c.client_id = "operator-app";
  c.token_endpoint_auth_method = "none";
  c.redirect_uris = {kRedirect};
  c.source = "admin";
  c.created_at = c.updated_at = s.clock->NowUnix();
  ASSERT_TRUE(s.clients->Insert(c, std::nullopt, std::nullopt));
  Browser b(server_);
  auto params = With(Params(), "client_id", "operator-app");
  ExpectRedirectError(Start(b, With(params, "response_type", "token")), "unsupported_response_type",
                      server_.base_url());
  ExpectRedirectError(Start(b, Without(params, "code_challenge")), "invalid_request",
                      server_.base_url());
  ExpectRedirectError(Start(b, With(params, "prompt", "none")), "login_required",
                      server_.base_url());
}

TEST_F(AuthorizeFlow, WrongRedirectUriIsShownNotRedirected_Rfc6749_4_1_2_1) {
  Browser b(server_);
  Page p = Start(b, With(Params(), "redirect_uri", "https://evil.example.com/callback"));
  EXPECT_EQ(p.status, 400);
  EXPECT_FALSE(p.client_redirect.has_value());
  EXPECT_FALSE(p.Header("Location").has_value());
  EXPECT_NE(p.Header("Content-Type").value_or("").find("text/html"), std::string::npos);
  EXPECT_NE(p.body.find("redirect_uri"), std::string::npos);
}

TEST_F(AuthorizeFlow, UnknownClientIsShownNotRedirected_Rfc6749_4_1_2_1) {
  Browser b(server_);
  Page p = Start(b, With(Params(), "client_id", "no-such-client"));
  EXPECT_EQ(p.status, 400);
  EXPECT_FALSE(p.Header("Location").has_value());
  Page missing = Start(b, Without(Params(), "client_id"));
  EXPECT_EQ(missing.status, 400);
  EXPECT_FALSE(missing.Header("Location").has_value());
}

TEST_F(AuthorizeFlow, LoopbackRedirectMayUseAnotherPort_Rfc8252_7_3) {
  Browser b(server_);
  auto p = With(Params(), "redirect_uri", "http://127.0.0.1:51234/callback");
  Page consent = SignIn(b, p);
  ASSERT_EQ(consent.status, 200);
  Page done = b.Submit(*consent.form(), std::make_pair("decision", "allow"));
  ASSERT_TRUE(done.client_redirect);
  EXPECT_EQ(done.client_redirect->rfind("http://127.0.0.1:51234/callback?", 0), 0u);
}

TEST_F(AuthorizeFlow, AbsentScopeAndResourceTakeDefaults) {
  Browser b(server_);
  Page consent = SignIn(b, Without(Params(""), "resource"));
  ASSERT_EQ(consent.status, 200) << consent.body;
  auto options = consent.form()->Options("scope");
  EXPECT_FALSE(options.empty());
  for (const auto& s : options) EXPECT_EQ(s.substr(s.size() - 5), ":read") << s;
}

TEST_F(AuthorizeFlow, BadPasswordGivesNoSessionAndSaysSo) {
  Browser b(server_);
  Page p = SignIn(b, Params(), "wrong password");
  EXPECT_EQ(p.status, 401);
  EXPECT_NE(p.body.find("Invalid email or password"), std::string::npos);
  EXPECT_FALSE(b.Cookie("crmd_session").has_value());
  for (const auto& c : p.set_cookies) EXPECT_EQ(c.find("crmd_session"), std::string::npos) << c;
  ASSERT_TRUE(p.form());  // the form again, to retry
  EXPECT_TRUE(p.form()->Value("password").has_value());
}

TEST_F(AuthorizeFlow, LoginWithoutCsrfTokenIs403) {
  Browser b(server_);
  auto form = Start(b, Params()).form();
  ASSERT_TRUE(form);
  form->Set("email", kEmail);
  form->Set("password", kPassword);
  form->Remove("csrf_token");
  EXPECT_EQ(b.Submit(*form).status, 403);
  form->Set("csrf_token", "forged");
  EXPECT_EQ(b.Submit(*form).status, 403);
  EXPECT_FALSE(b.Cookie("crmd_session").has_value());
}

TEST_F(AuthorizeFlow, ConsentWithoutCsrfTokenIs403) {
  Browser b(server_);
  Page consent = SignIn(b, Params());
  auto form = consent.form();
  ASSERT_TRUE(form);
  form->Remove("csrf_token");
  Page p = b.Submit(*form, std::make_pair("decision", "allow"));
  EXPECT_EQ(p.status, 403);
  EXPECT_FALSE(p.client_redirect.has_value());
}

TEST_F(AuthorizeFlow, ForeignOriginPostIs403) {
  Browser b(server_);
  auto form = Start(b, Params()).form();
  ASSERT_TRUE(form);
  form->Set("email", kEmail);
  form->Set("password", kPassword);
  b.set_origin("https://evil.example.com");
  EXPECT_EQ(b.Submit(*form).status, 403);
}

TEST_F(AuthorizeFlow, PendingRequestIsBoundToTheBrowserThatStartedIt) {
  Browser b(server_);
  Page login = Start(b, Params());
  ASSERT_EQ(login.status, 200);
  Browser other(server_);
  Page stolen = other.Get(login.url);
  EXPECT_EQ(stolen.status, 400);
  auto form = login.form();
  form->Set("email", kEmail);
  form->Set("password", kPassword);
  EXPECT_EQ(other.Submit(*form).status, 400);
}

TEST_F(AuthorizeFlow, UncheckingNarrowsTheCodeScope) {
  Browser b(server_);
  Page consent = SignIn(b, Params("contacts:read contacts:write lists:read"));
  auto form = consent.form();
  ASSERT_TRUE(form);
  ASSERT_TRUE(form->SetChecked("scope", "contacts:write", false));
  form->Set("scope_extra", "x");
  Page done = b.Submit(*form, std::make_pair("decision", "allow"));
  ASSERT_TRUE(done.client_redirect);
  auto code = QueryParams(*done.client_redirect)["code"];
  EXPECT_EQ(CodeScope(code), "contacts:read lists:read");
}

TEST_F(AuthorizeFlow, ConsentCannotWidenTheRequest) {
  Browser b(server_);
  Page consent = SignIn(b, Params("contacts:read"));
  auto form = consent.form();
  auto fields = form->Fields(std::make_pair("decision", "allow"));
  fields.emplace_back("scope", "contacts:delete");
  Page done = b.PostForm(form->action, fields);
  ASSERT_TRUE(done.client_redirect);
  EXPECT_EQ(CodeScope(QueryParams(*done.client_redirect)["code"]), "contacts:read");
}

TEST_F(AuthorizeFlow, DenyRedirectsAccessDenied_Rfc6749_4_1_2_1) {
  Browser b(server_);
  Page consent = SignIn(b, Params());
  Page denied = b.Submit(*consent.form(), std::make_pair("decision", "deny"));
  ExpectRedirectError(denied, "access_denied", server_.base_url());
}

TEST_F(AuthorizeFlow, RememberedConsentSkipsThePageForSubsets) {
  Browser b(server_);
  Page consent = SignIn(b, Params("contacts:read contacts:write"));
  ASSERT_TRUE(b.Submit(*consent.form(), std::make_pair("decision", "allow")).client_redirect);

  Page again = Start(b, Params("contacts:read"));  // signed in, subset: straight back
  ASSERT_TRUE(again.client_redirect) << again.status << again.body;
  auto code = QueryParams(*again.client_redirect)["code"];
  EXPECT_EQ(CodeScope(code), "contacts:read");
  EXPECT_EQ(QueryParams(*again.client_redirect)["state"], "xyz-state");

  Page wider = Start(b, Params("contacts:read lists:read"));  // not covered: asks
  EXPECT_EQ(wider.status, 200);
  EXPECT_FALSE(wider.client_redirect.has_value());
  EXPECT_EQ(wider.form()->Options("scope"),
            (std::vector<std::string>{"contacts:read", "lists:read"}));
}

TEST_F(AuthorizeFlow, RememberedConsentStillNeedsASignIn) {
  Browser b(server_);
  Page consent = SignIn(b, Params());
  ASSERT_TRUE(b.Submit(*consent.form(), std::make_pair("decision", "allow")).client_redirect);
  Browser fresh(server_);
  Page p = Start(fresh, Params());
  EXPECT_EQ(p.status, 200);
  EXPECT_TRUE(p.form()->Value("password").has_value());
}

TEST_F(AuthorizeFlow, RevokedConsentAsksAgain) {
  Browser b(server_);
  Page consent = SignIn(b, Params());
  ASSERT_TRUE(b.Submit(*consent.form(), std::make_pair("decision", "allow")).client_redirect);
  auto& s = server_.app().services();
  auto user = s.users->FindByEmail(kEmail);
  ASSERT_TRUE(user && *user);
  EXPECT_EQ(*s.consents->Revoke(client_id_, (*user)->id), 1);
  Page p = Start(b, Params());
  EXPECT_EQ(p.status, 200);
  EXPECT_FALSE(p.client_redirect.has_value());
  EXPECT_FALSE(p.form()->Options("scope").empty());
}

TEST_F(AuthorizeFlow, SessionCookieAttributesOverPlainHttp) {
  Browser b(server_);
  Page consent = SignIn(b, Params());
  std::string session;
  for (const auto& c : consent.set_cookies)
    if (c.rfind("crmd_session=", 0) == 0) session = c;
  ASSERT_FALSE(session.empty());
  EXPECT_NE(session.find("HttpOnly"), std::string::npos);
  EXPECT_NE(session.find("SameSite=Lax"), std::string::npos);
  EXPECT_NE(session.find("Path=/"), std::string::npos);
  EXPECT_EQ(session.find("Secure"), std::string::npos);  // plain http: no Secure, no __Host-
  EXPECT_EQ(session.find("Domain"), std::string::npos);
  EXPECT_EQ(session.find("crmd_session=" + std::string(64, 'x')), std::string::npos);
}

TEST_F(AuthorizeFlow, HtmlPagesForbidFraming) {
  Browser b(server_);
  Page login = Start(b, Params());
  EXPECT_NE(login.Header("Content-Security-Policy").value_or("").find("frame-ancestors 'none'"),
            std::string::npos);
  Page consent = SignIn(b, Params());
  EXPECT_NE(consent.Header("Content-Security-Policy").value_or("").find("frame-ancestors 'none'"),
            std::string::npos);
  Page error = Start(b, With(Params(), "client_id", "nope"));
  EXPECT_NE(error.Header("Content-Security-Policy").value_or("").find("frame-ancestors 'none'"),
            std::string::npos);
}

TEST_F(AuthorizeFlow, LoginFormHasTheExpectedFields) {
  Browser b(server_);
  Page login = Start(b, Params());
  EXPECT_NE(login.body.find("<form method=\"post\""), std::string::npos);
  EXPECT_NE(login.body.find("type=\"email\" name=\"email\" autocomplete=\"username\""),
            std::string::npos);
  EXPECT_NE(
      login.body.find("type=\"password\" name=\"password\" autocomplete=\"current-password\""),
      std::string::npos);
}

TEST_F(AuthorizeFlow, RevokedClientCannotAuthorize) {
  ASSERT_TRUE(server_.app().services().clients->Revoke(client_id_));
  Browser b(server_);
  EXPECT_EQ(Start(b, Params()).status, 400);
}

}  // namespace
}  // namespace crmd

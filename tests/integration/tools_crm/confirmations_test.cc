// The CRM's confirmable deletions (delete_contacts, delete_list, delete_tag) end to end
// through /mcp, against TOOLS.md "Confirmation": the preview changes nothing; confirm_action
// performs exactly that action once; a replayed token, another OAuth client's or another
// user's confirm are refused; an update in between is stale_preview with a fresh token; a
// dependant blocks it (in the preview and at confirm time); of two concurrent confirms
// exactly one succeeds.
#include <atomic>
#include <functional>
#include <ostream>
#include <thread>

#include "tests/integration/tools_crm/fixture.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

struct Flow {
  std::string tool;   // delete_contacts | delete_list | delete_tag
  std::string scope;  // the action's scope
  // Makes the targets (with memberships) and returns the preview arguments.
  std::function<json(CrmTools&, McpClient&)> make;
  // How many of the targets still exist, read back through the tools.
  std::function<int(CrmTools&, McpClient&, const json& args)> remaining;
  int targets = 1;
  // An ordinary update of a target, which moves its revision.
  std::function<void(CrmTools&, McpClient&, const json& args)> touch;
  // Makes an active user of the target (blocking its deletion); null when nothing can
  // depend on it (a contact has no dependants, crm::ContactService::DeleteAction).
  std::function<void(CrmTools&, McpClient&, const json& args)> depend;
  std::string blocker_kind;
};

void PrintTo(const Flow& f, std::ostream* os) { *os << f.tool; }

class Confirmations : public CrmTools, public ::testing::WithParamInterface<Flow> {
 public:
  using CrmTools::ActiveAutomation;
  using CrmTools::Err;
  using CrmTools::FindContact;
  using CrmTools::NewContact;
  using CrmTools::NewList;
  using CrmTools::NewTag;
  using CrmTools::Ok;
  using CrmTools::SendingCampaign;

 protected:
  int Remaining(McpClient& c, const json& args) { return GetParam().remaining(*this, c, args); }
  int64_t Performed() {
    return Count("SELECT COUNT(*) FROM audit_log WHERE action = ?", {GetParam().tool});
  }
  // Everything but the confirmations themselves.
  json Records() {
    json f = Fingerprint();
    f.erase("SELECT COUNT(*) FROM confirmations");
    f.erase("SELECT COUNT(*) FROM confirmations WHERE status = 'pending'");
    return f;
  }
};
Confirmations& C(CrmTools& t) { return static_cast<Confirmations&>(t); }

int GroupRemaining(McpClient& c, const std::string& noun, const json& args) {
  auto r = c.CallTool("get_" + noun, {{"id", args["id"]}});
  if (r.is_tool_error() && r.structured()["error"].value("code", "") == "not_found") return 0;
  EXPECT_TRUE(r.ok() && !r.is_tool_error()) << r.raw;
  return 1;
}

Flow GroupFlow(const std::string& noun) {
  const std::string plural = noun + "s";
  Flow f;
  f.tool = "delete_" + noun;
  f.scope = plural + ":delete";
  f.make = [noun, plural](CrmTools& t, McpClient& c) {
    int64_t g = noun == "list" ? C(t).NewList(c, "Target") : C(t).NewTag(c, "Target");
    C(t).NewContact(c, "member@example.com", {{plural, {g}}});
    return json{{"id", g}};
  };
  f.remaining = [noun](CrmTools&, McpClient& c, const json& args) {
    return GroupRemaining(c, noun, args);
  };
  f.touch = [noun](CrmTools& t, McpClient& c, const json& args) {
    json g = C(t).Ok(c, "get_" + noun, args)[noun];
    C(t).Ok(c, "update_" + noun,
            {{"id", args["id"]}, {"expected_revision", g["revision"]}, {"name", "Renamed"}});
  };
  if (noun == "list") {
    f.depend = [](CrmTools& t, McpClient& c, const json& args) {
      C(t).SendingCampaign(c, args["id"].get<int64_t>());
    };
    f.blocker_kind = "campaign";
  } else {
    f.depend = [](CrmTools& t, McpClient& c, const json& args) {
      C(t).ActiveAutomation(c, args["id"].get<int64_t>());
    };
    f.blocker_kind = "automation";
  }
  return f;
}

Flow ContactsFlow() {
  Flow f;
  f.tool = "delete_contacts";
  f.scope = "contacts:delete";
  f.targets = 2;
  f.make = [](CrmTools& t, McpClient& c) {
    C(t).NewList(c, "L");
    int64_t a = C(t).NewContact(c, "one@example.com", {{"tags", {"vip"}}, {"lists", {"L"}}});
    int64_t b = C(t).NewContact(c, "two@example.com");
    return json{{"ids", {a, b}}};
  };
  f.remaining = [](CrmTools& t, McpClient& c, const json& args) {
    int n = 0;
    for (const auto& id : args["ids"]) n += C(t).FindContact(c, id).is_null() ? 0 : 1;
    return n;
  };
  f.touch = [](CrmTools& t, McpClient& c, const json& args) {
    int64_t id = args["ids"][1];
    json k = C(t).Ok(c, "get_contact", {{"id", id}})["contact"];
    C(t).Ok(c, "update_contact",
            {{"id", id}, {"expected_revision", k["revision"]}, {"first_name", "Changed"}});
  };
  return f;
}

std::string FlowName(const ::testing::TestParamInfo<Flow>& i) { return i.param.tool; }

TEST_P(Confirmations, PreviewChangesNothing) {
  auto c = Client();
  json args = GetParam().make(*this, *c);
  json before = Records();
  int64_t pending = Count("SELECT COUNT(*) FROM confirmations WHERE status = 'pending'");
  json out = Ok(*c, GetParam().tool, args);
  EXPECT_EQ(out.value("status", ""), "confirmation_required") << out.dump();
  EXPECT_TRUE(out["confirmation_token"].is_string());
  EXPECT_TRUE(out["preview"].is_object());
  EXPECT_EQ(Records(), before);
  EXPECT_EQ(Remaining(*c, args), GetParam().targets);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM confirmations WHERE status = 'pending'"), pending + 1);
  EXPECT_EQ(Performed(), 0);
}

TEST_P(Confirmations, ConfirmPerformsItOnceAndAReplayIsRefused) {
  auto c = Client();
  json args = GetParam().make(*this, *c);
  std::string token = Preview(*c, GetParam().tool, args);
  json done = Ok(*c, "confirm_action", {{"confirmation_token", token}});
  EXPECT_EQ(done.value("status", ""), "done") << done.dump();
  EXPECT_EQ(done.value("action", ""), GetParam().tool);
  EXPECT_EQ(Remaining(*c, args), 0);
  EXPECT_EQ(Performed(), 1);

  json before = Fingerprint();
  Err(*c, "confirm_action", {{"confirmation_token", token}}, "confirmation_invalid");
  EXPECT_EQ(Fingerprint(), before);
  EXPECT_EQ(Performed(), 1);
}

TEST_P(Confirmations, AnotherClientOrUserCannotConfirm) {
  auto alice = Client();
  auto other_client = Client({.client_id = "client-b", .subject = "alice"});
  auto other_user = Client({.client_id = "client-a", .subject = "bob"});
  json args = GetParam().make(*this, *alice);
  std::string token = Preview(*alice, GetParam().tool, args);
  Err(*other_client, "confirm_action", {{"confirmation_token", token}}, "confirmation_invalid");
  Err(*other_user, "confirm_action", {{"confirmation_token", token}}, "confirmation_invalid");
  EXPECT_EQ(Remaining(*alice, args), GetParam().targets);
  EXPECT_EQ(Performed(), 0);
  // The refusals did not use the token up.
  EXPECT_EQ(Ok(*alice, "confirm_action", {{"confirmation_token", token}}).value("status", ""),
            "done");
  EXPECT_EQ(Remaining(*alice, args), 0);
}

TEST_P(Confirmations, ConfirmNeedsTheActionsScope) {
  auto c = Client();
  auto weak = ClientWithout(GetParam().scope);
  json args = GetParam().make(*this, *c);
  std::string token = Preview(*c, GetParam().tool, args);
  auto r = weak->CallTool("confirm_action", {{"confirmation_token", token}});
  EXPECT_EQ(r.status, 403) << r.raw;
  EXPECT_EQ(Remaining(*c, args), GetParam().targets);
  EXPECT_EQ(Ok(*c, "confirm_action", {{"confirmation_token", token}}).value("status", ""), "done");
}

TEST_P(Confirmations, AnUpdateInBetweenMakesThePreviewStale) {
  auto c = Client();
  json args = GetParam().make(*this, *c);
  std::string token = Preview(*c, GetParam().tool, args);
  GetParam().touch(*this, *c, args);
  json err = Err(*c, "confirm_action", {{"confirmation_token", token}}, "stale_preview");
  EXPECT_EQ(Remaining(*c, args), GetParam().targets);
  EXPECT_EQ(Performed(), 0);
  // The error carries a fresh preview and token; the old token is spent.
  ASSERT_TRUE(err["details"]["confirmation_token"].is_string()) << err.dump();
  std::string fresh = err["details"]["confirmation_token"];
  EXPECT_NE(fresh, token);
  EXPECT_TRUE(err["details"]["preview"].is_object()) << err.dump();
  Err(*c, "confirm_action", {{"confirmation_token", token}}, "confirmation_invalid");
  EXPECT_EQ(Ok(*c, "confirm_action", {{"confirmation_token", fresh}}).value("status", ""), "done");
  EXPECT_EQ(Remaining(*c, args), 0);
  EXPECT_EQ(Performed(), 1);
}

TEST_P(Confirmations, ARecordGoneSinceThePreviewMakesThePreviewStale) {
  auto c = Client();
  json args = GetParam().make(*this, *c);
  std::string first = Preview(*c, GetParam().tool, args);
  std::string second = Preview(*c, GetParam().tool, args);
  EXPECT_EQ(Ok(*c, "confirm_action", {{"confirmation_token", second}}).value("status", ""), "done");
  json err = Err(*c, "confirm_action", {{"confirmation_token", first}}, "stale_preview");
  EXPECT_NE(err.dump().find("again for a fresh preview"), std::string::npos) << err.dump();
  EXPECT_EQ(Performed(), 1);
}

TEST_P(Confirmations, TwoConcurrentConfirmsSucceedExactlyOnce) {
  auto c = Client();
  json args = GetParam().make(*this, *c);
  std::string token = Preview(*c, GetParam().tool, args);
  auto c1 = Client();
  auto c2 = Client();
  std::atomic<int> ready{0};
  std::atomic<int> done{0};
  std::atomic<int> refused{0};
  auto confirm = [&](McpClient* m) {
    ++ready;
    while (ready.load() < 2) std::this_thread::yield();
    auto r = m->CallTool("confirm_action", {{"confirmation_token", token}});
    if (r.ok() && !r.is_tool_error() && r.structured().value("status", "") == "done")
      ++done;
    else if (r.is_tool_error() &&
             r.structured()["error"].value("code", "") == "confirmation_invalid")
      ++refused;
  };
  std::thread a(confirm, c1.get());
  std::thread b(confirm, c2.get());
  a.join();
  b.join();
  EXPECT_EQ(done.load(), 1);
  EXPECT_EQ(refused.load(), 1);
  EXPECT_EQ(Remaining(*c, args), 0);
  EXPECT_EQ(Performed(), 1);
}

INSTANTIATE_TEST_SUITE_P(Crm, Confirmations,
                         ::testing::Values(ContactsFlow(), GroupFlow("list"), GroupFlow("tag")),
                         FlowName);

// Only lists and tags can have dependants.
class Dependencies : public Confirmations {};

TEST_P(Dependencies, AnActiveDependantBlocksThePreviewWithoutAToken) {
  auto c = Client();
  json args = GetParam().make(*this, *c);
  GetParam().depend(*this, *c, args);
  json before = Fingerprint();
  json err = Err(*c, GetParam().tool, args, "dependency_blocked");
  ASSERT_TRUE(err["details"]["blockers"].is_array()) << err.dump();
  ASSERT_EQ(err["details"]["blockers"].size(), 1u) << err.dump();
  EXPECT_EQ(err["details"]["blockers"][0]["kind"], GetParam().blocker_kind);
  EXPECT_FALSE(err.contains("confirmation_token") || err["details"].contains("confirmation_token"))
      << err.dump();
  EXPECT_NE(err.value("message", "").find(GetParam().blocker_kind), std::string::npos)
      << err.dump();
  EXPECT_EQ(Fingerprint(), before);
  EXPECT_EQ(Remaining(*c, args), 1);
}

TEST_P(Dependencies, ADependantAddedAfterThePreviewBlocksTheConfirm) {
  auto c = Client();
  json args = GetParam().make(*this, *c);
  std::string token = Preview(*c, GetParam().tool, args);
  GetParam().depend(*this, *c, args);
  json err = Err(*c, "confirm_action", {{"confirmation_token", token}}, "dependency_blocked");
  EXPECT_EQ(err["details"]["blockers"][0]["kind"], GetParam().blocker_kind) << err.dump();
  EXPECT_EQ(Remaining(*c, args), 1);
  EXPECT_EQ(Performed(), 0);
}

INSTANTIATE_TEST_SUITE_P(Crm, Dependencies, ::testing::Values(GroupFlow("list"), GroupFlow("tag")),
                         FlowName);

}  // namespace
}  // namespace crmd::testing

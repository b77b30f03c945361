// The CRM tools through the real ToolRegistry (schemas, scope checks, handlers) in-process.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "auth/scopes.h"
#include "src/core/embedded.h"
#include "src/governance/approval_policy.h"
#include "src/marketing/services.h"
#include "src/mcp/data_block.h"
#include "src/mcp/registry.h"
#include "tests/unit/crm/fixture.h"
#include "tools/confirm.h"
#include "tools/contacts.h"
#include "tools/lists.h"
#include "tools/settings.h"
#include "tools/tags.h"

namespace crmd::crm {
namespace {

using nlohmann::json;

const std::set<std::string> kOurTools = {"list_contacts",
                                         "get_contact",
                                         "create_contact",
                                         "update_contact",
                                         "upsert_contacts_bulk",
                                         "set_contact_status",
                                         "add_contact_tags",
                                         "remove_contact_tags",
                                         "add_contact_to_lists",
                                         "remove_contact_from_lists",
                                         "delete_contacts",
                                         "validate_email",
                                         "list_lists",
                                         "get_list",
                                         "create_list",
                                         "update_list",
                                         "delete_list",
                                         "list_tags",
                                         "get_tag",
                                         "create_tag",
                                         "update_tag",
                                         "delete_tag",
                                         "confirm_action",
                                         "get_settings",
                                         "update_settings"};

class Tools : public testing::CrmFixture {
 protected:
  mcp::ToolRegistry registry;
  Principal principal;
  std::unique_ptr<marketing::Services> marketing;

  void SetUp() override {
    CrmFixture::SetUp();
    auto made = marketing::MakeServices(*governance, *s);
    ASSERT_TRUE(made) << made.error().message;
    marketing = std::move(*made);
    for (auto reg : {tools::RegisterContactTools, tools::RegisterListTools, tools::RegisterTagTools,
                     tools::RegisterConfirmTools, tools::RegisterSettingsTools}) {
      auto st = reg(registry, *marketing);
      ASSERT_TRUE(st) << st.error().message;
    }
    principal = {.subject = "user-alice", .client_id = "client-a"};
    for (const auto& sc : auth::AllScopes()) principal.scopes.insert(sc);
    // These tests are about the tools' mechanics; the default policy (the person
    // approves) is tested below and in tests/integration/approvals.
    AssistantMayConfirmAlone();
  }

  mcp::CallOutcome Raw(const std::string& name, const json& args) {
    mcp::ToolContext ctx{.principal = principal, .request_id = "req", .session_id = ""};
    return registry.Call(ctx, {{"name", name}, {"arguments", args}});
  }
  // structuredContent of a successful call.
  json Ok(const std::string& name, const json& args) {
    auto o = Raw(name, args);
    EXPECT_EQ(o.kind, mcp::CallOutcome::Kind::kResult) << name;
    EXPECT_FALSE(o.result.value("isError", false)) << name << ": " << o.result.dump();
    return o.result.value("structuredContent", json());
  }
  // The error object of a tool error.
  json Err(const std::string& name, const json& args) {
    auto o = Raw(name, args);
    EXPECT_EQ(o.kind, mcp::CallOutcome::Kind::kResult) << name;
    EXPECT_TRUE(o.result.value("isError", false)) << name << ": " << o.result.dump();
    // Tool errors travel in the text block only (no structuredContent).
    EXPECT_FALSE(o.result.contains("structuredContent")) << name;
    auto body = mcp::ParseDataText(o.result["content"][0]["text"].get<std::string>());
    EXPECT_TRUE(body) << name << ": " << o.result.dump();
    return body ? (*body)["error"] : json();
  }
};

TEST_F(Tools, RegistersExactlyOurSchemaFiles) {
  auto names = registry.Names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), kOurTools);
}

TEST_F(Tools, SchemaFilesAreASubsetOfTheCatalogue) {
  std::ifstream in(std::string(CRMD_SOURCE_DIR) + "/tests/data/tools.txt");
  std::set<std::string> catalogue;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) catalogue.insert(line);
  ASSERT_EQ(catalogue.size(), 48u);
  std::set<std::string> files;
  for (const auto& f : embedded::All()) {
    std::string_view p = f.path;
    if (p.rfind("tools/", 0) == 0 && p.size() > 11 && p.substr(p.size() - 5) == ".json")
      files.insert(std::string(p.substr(6, p.size() - 11)));
  }
  for (const auto& f : files) EXPECT_TRUE(catalogue.count(f)) << f << " is not in TOOLS.md";
  for (const auto& t : kOurTools) EXPECT_TRUE(files.count(t)) << t;
  // Every catalogue tool has a schema file, and nothing else does.
  EXPECT_EQ(files, catalogue);
}

TEST_F(Tools, AnnotationsMatchTheKind) {
  for (const auto& name : kOurTools) {
    const json* d = registry.Descriptor(name);
    ASSERT_NE(d, nullptr);
    const json& a = (*d)["annotations"];
    bool read =
        name.rfind("list_", 0) == 0 || name.rfind("get_", 0) == 0 || name == "validate_email";
    bool destructive = name.rfind("delete_", 0) == 0;
    EXPECT_EQ(a["readOnlyHint"], read) << name;
    EXPECT_EQ(a["destructiveHint"], destructive) << name;
    EXPECT_EQ(a["openWorldHint"], false) << name;
  }
}

TEST_F(Tools, CreateGetListContact) {
  json created = Ok("create_contact",
                    {{"email", "Jane@Example.com"}, {"first_name", "Jane"}, {"tags", {"vip"}}});
  EXPECT_EQ(created["contact"]["email"], "jane@example.com");
  int64_t id = created["contact"]["id"];
  EXPECT_EQ(Ok("get_contact", {{"id", id}})["contact"]["tags"][0]["name"], "vip");
  EXPECT_EQ(Ok("get_contact", {{"email", "JANE@example.com"}})["contact"]["id"], id);
  json page = Ok("list_contacts", {{"tag", "vip"}});
  EXPECT_EQ(page["items"].size(), 1u);
  EXPECT_TRUE(page["next_cursor"].is_null());
}

TEST_F(Tools, SchemaViolationNamesTheField) {
  json e = Err("create_contact", {{"email", "a@example.com"}, {"status", "spam"}});
  EXPECT_EQ(e["code"], "validation_failed");
  EXPECT_EQ(e["field"], "status");
  EXPECT_EQ(Err("list_contacts", {{"limit", 1000}})["field"], "limit");
}

TEST_F(Tools, MissingScopeIsRefusedBeforeTheHandler) {
  principal.scopes = {"contacts:read"};
  auto o = Raw("create_contact", {{"email", "a@example.com"}});
  EXPECT_EQ(o.kind, mcp::CallOutcome::Kind::kInsufficientScope);
  EXPECT_EQ(o.required_scope, "contacts:write");
  EXPECT_FALSE(s->contacts->GetByEmail("a@example.com"));
}

TEST_F(Tools, NotFoundAndDuplicateUseCatalogueCodes) {
  EXPECT_EQ(Err("get_contact", {{"id", 999}})["code"], "not_found");
  EXPECT_EQ(Err("get_list", {{"name", "nope"}})["code"], "not_found");
  Ok("create_contact", {{"email", "a@example.com"}});
  json dup = Err("create_contact", {{"email", "a@example.com"}});
  EXPECT_EQ(dup["code"], "validation_failed");
  EXPECT_TRUE(dup["details"].contains("existing_id"));
}

// TOOLS.md: a duplicate is validation_failed with details.existing_id, whatever the kind
// (create_list and create_tag used to answer it without the id).
TEST_F(Tools, DuplicateListOrTagNamesTheExistingOne) {
  for (std::string noun : {"list", "tag"}) {
    int64_t id = Ok("create_" + noun, {{"name", "VIP"}})[noun]["id"];
    json dup = Err("create_" + noun, {{"name", "VIP"}});
    EXPECT_EQ(dup["code"], "validation_failed") << noun;
    EXPECT_EQ(dup["details"]["existing_id"], id) << noun;
    EXPECT_EQ(dup["details"]["hint"], "use update_" + noun + " to change it") << noun;
  }
}

TEST_F(Tools, UpdateRevisionConflictReturnsCurrentRecord) {
  int64_t id = Ok("create_contact", {{"email", "a@example.com"}})["contact"]["id"];
  Ok("update_contact", {{"id", id}, {"expected_revision", 1}, {"first_name", "A"}});
  json e = Err("update_contact", {{"id", id}, {"expected_revision", 1}, {"first_name", "B"}});
  EXPECT_EQ(e["code"], "revision_conflict");
  EXPECT_EQ(e["details"]["current"]["revision"], 2);
  EXPECT_EQ(e["details"]["current"]["first_name"], "A");
}

TEST_F(Tools, SetStatusInvalidTransitionListsAllowedTargets) {
  int64_t id = Ok("create_contact", {{"email", "a@example.com"}})["contact"]["id"];
  Ok("set_contact_status", {{"id", id}, {"status", "complained"}});
  json e = Err("set_contact_status", {{"id", id}, {"status", "subscribed"}, {"consent", true}});
  EXPECT_EQ(e["code"], "invalid_transition");
  EXPECT_EQ(e["details"]["allowed"], json::array({"unsubscribed"}));
}

TEST_F(Tools, BulkUpsertPerItemResults) {
  json r = Ok("upsert_contacts_bulk", {{"contacts",
                                        {{{"email", "a@example.com"}},
                                         {{"email", "bad"}},
                                         {{"email", "a@example.com"}, {"first_name", "Again"}}}}});
  EXPECT_EQ(r["created"], 1);
  EXPECT_EQ(r["failed"], 1);
  EXPECT_EQ(r["updated"], 1);
  EXPECT_EQ(r["results"][1]["error"]["code"], "validation_failed");
}

TEST_F(Tools, MembershipToolsReportChanges) {
  int64_t id = Ok("create_contact", {{"email", "a@example.com"}})["contact"]["id"];
  Ok("create_list", {{"name", "News"}});
  json r = Ok("add_contact_to_lists", {{"contact_ids", {id}}, {"lists", {"News"}}});
  EXPECT_EQ(r["contacts_changed"], 1);
  EXPECT_EQ(Ok("get_list", {{"name", "News"}})["list"]["member_count"], 1);
  r = Ok("remove_contact_from_lists", {{"contact_ids", {id}}, {"lists", {"News"}}});
  EXPECT_EQ(r["results"][0]["changed"][0]["name"], "News");
  Ok("add_contact_tags", {{"contact_ids", {id}}, {"tags", {"hot", "cold"}}});
  EXPECT_EQ(Ok("list_tags", json::object())["items"].size(), 2u);
  Ok("remove_contact_tags", {{"contact_ids", {id}}, {"tags", {"hot"}}});
  EXPECT_EQ(Ok("get_tag", {{"name", "hot"}})["tag"]["member_count"], 0);
}

TEST_F(Tools, DeleteContactsPreviewThenConfirm) {
  int64_t id = Ok("create_contact", {{"email", "a@example.com"}})["contact"]["id"];
  json p = Ok("delete_contacts", {{"ids", {id}}});
  EXPECT_EQ(p["status"], "confirmation_required");
  EXPECT_EQ(p["preview"]["count"], 1);
  Ok("get_contact", {{"id", id}});  // still there
  json done = Ok("confirm_action", {{"confirmation_token", p["confirmation_token"]}});
  EXPECT_EQ(done["result"]["deleted_count"], 1);
  EXPECT_EQ(Err("get_contact", {{"id", id}})["code"], "not_found");
  EXPECT_EQ(Err("confirm_action", {{"confirmation_token", p["confirmation_token"]}})["code"],
            "confirmation_invalid");
}

TEST_F(Tools, ConfirmWithoutTheActionsScopeIsAStepUp) {
  int64_t id = Ok("create_list", {{"name", "L"}})["list"]["id"];
  json p = Ok("delete_list", {{"id", id}});
  principal.scopes = {"lists:read"};
  auto o = Raw("confirm_action", {{"confirmation_token", p["confirmation_token"]}});
  EXPECT_EQ(o.kind, mcp::CallOutcome::Kind::kInsufficientScope);
  EXPECT_EQ(o.required_scope, "lists:delete");
}

TEST_F(Tools, DeleteListBlockedByActiveAutomation) {
  int64_t id = Ok("create_list", {{"name", "L"}})["list"]["id"];
  usage.lists[id] = {{.kind = "automation",
                      .id = 1,
                      .name = "Welcome",
                      .status = "active",
                      .role = "trigger",
                      .blocking = true}};
  json e = Err("delete_list", {{"id", id}});
  EXPECT_EQ(e["code"], "dependency_blocked");
  EXPECT_EQ(e["details"]["blockers"][0]["kind"], "automation");
  EXPECT_EQ(Ok("get_list", {{"id", id}})["list"]["used_by"][0]["role"], "trigger");
}

TEST_F(Tools, SettingsRoundTripWithRevision) {
  json g = Ok("get_settings", json::object());
  int64_t rev = g["revision"];
  json u = Ok("update_settings",
              {{"expected_revision", rev}, {"settings", {{"sender", {{"from_name", "Acme"}}}}}});
  EXPECT_EQ(u["settings"]["sender"]["from_name"], "Acme");
  EXPECT_EQ(u["revision"], rev + 1);
  EXPECT_EQ(Err("update_settings",
                {{"expected_revision", rev}, {"settings", {{"double_opt_in", true}}}})["code"],
            "revision_conflict");
  EXPECT_EQ(Err("update_settings",
                {{"expected_revision", rev + 1}, {"settings", {{"unknown", 1}}}})["field"],
            "settings.unknown");
}

TEST_F(Tools, UnderTheDefaultPolicyConfirmActionAloneAnswersApprovalPending) {
  SetApprovalPolicy(governance::DefaultApprovalPolicy());
  int64_t id = Ok("create_tag", {{"name", "T"}})["tag"]["id"];
  json p = Ok("delete_tag", {{"id", id}});
  EXPECT_EQ(p["approval_required"], true);
  EXPECT_NE(p["approval_url"].get<std::string>().find("/console/approvals/"), std::string::npos);
  json e = Err("confirm_action", {{"confirmation_token", p["confirmation_token"]}});
  EXPECT_EQ(e["code"], "approval_pending");
  EXPECT_EQ(e["details"]["approval_url"], p["approval_url"]);
  Ok("get_tag", {{"id", id}});  // still there
}

TEST_F(Tools, UpdateSettingsCannotChangeTheApprovalPolicy) {
  int64_t rev = Ok("get_settings", json::object())["revision"];
  json e = Err("update_settings",
               {{"expected_revision", rev},
                {"settings", {{"approval_policy", {{"require_person", json::array()}}}}}});
  EXPECT_EQ(e["code"], "forbidden");
  EXPECT_NE(e["message"].get<std::string>().find("crmctl"), std::string::npos);
  EXPECT_EQ(Ok("get_settings", json::object())["revision"], rev);
}

TEST_F(Tools, ValidateEmailReportsFlags) {
  json v = Ok("validate_email", {{"email", "admin@mailinator.com"}});
  EXPECT_TRUE(v["valid"]);
  EXPECT_TRUE(v["disposable"]);
  EXPECT_TRUE(v["role_account"]);
  EXPECT_FALSE(Ok("validate_email", {{"email", "nope"}})["valid"]);
}

TEST_F(Tools, CreateWithIdempotencyKeyReturnsFirstResult) {
  json a = Ok("create_contact", {{"email", "a@example.com"}, {"idempotency_key", "k1"}});
  json b = Ok("create_contact", {{"email", "a@example.com"}, {"idempotency_key", "k1"}});
  EXPECT_EQ(a["contact"]["id"], b["contact"]["id"]);
  json l1 = Ok("create_tag", {{"name", "t"}, {"idempotency_key", "k2"}});
  json l2 = Ok("create_tag", {{"name", "t"}, {"idempotency_key", "k2"}});
  EXPECT_EQ(l1["tag"]["id"], l2["tag"]["id"]);
}

TEST_F(Tools, PaginationCursorIsOpaqueAndComplete) {
  for (int i = 0; i < 5; ++i) Ok("create_list", {{"name", "list" + std::to_string(i)}});
  std::set<std::string> seen;
  json args = {{"limit", 2}};
  for (int pages = 0; pages < 10; ++pages) {
    json p = Ok("list_lists", args);
    for (const auto& it : p["items"]) seen.insert(it["name"]);
    if (p["next_cursor"].is_null()) break;
    args["cursor"] = p["next_cursor"];
  }
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(Err("list_lists", {{"cursor", "bogus"}})["code"], "validation_failed");
}

}  // namespace
}  // namespace crmd::crm

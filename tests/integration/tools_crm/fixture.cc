#include "tests/integration/tools_crm/fixture.h"

#include <algorithm>

#include "auth/scopes.h"

namespace crmd::testing {

using nlohmann::json;

// Campaigns send one message, then one per 100 s: "sending" stays observable.
// The CRM tools' mechanics; human approval has its own suite (tests/integration/approvals).
CrmTools::CrmTools()
    : server_(TestServerOptions{.configure = [](Config& c) { c.mail_rate_per_second = 0.01; },
                                .approval_policy = AssistantMayConfirmAlone(),
                                .company_address = "1 Test Street, Testville"}) {
  auto db = store::Open(server_.database_url(), 1);
  EXPECT_TRUE(db.has_value());
  if (db) db_ = std::move(*db);
}

std::unique_ptr<McpClient> CrmTools::Client(const CrmClientOptions& options) {
  std::string token = MintTestToken(
      server_,
      TestTokenOptions{.scopes = options.scopes.empty() ? auth::AllScopes() : options.scopes,
                       .client_id = options.client_id,
                       .subject = options.subject});
  auto c = std::make_unique<McpClient>(server_, McpClientOptions{.token = token});
  auto r = c->Initialize();
  EXPECT_TRUE(r.ok()) << r.raw;
  return c;
}

std::unique_ptr<McpClient> CrmTools::ClientWithout(const std::string& scope) {
  std::vector<std::string> scopes = auth::AllScopes();
  auto it = std::find(scopes.begin(), scopes.end(), scope);
  EXPECT_NE(it, scopes.end()) << scope << " is not a known scope";
  if (it != scopes.end()) scopes.erase(it);
  return Client({.scopes = scopes});
}

json CrmTools::Ok(McpClient& c, const std::string& tool, const json& args) {
  json out = c.CallToolOk(tool, args);
  if (out.is_null()) {
    ADD_FAILURE() << tool << " " << args.dump() << " failed";
  }
  return out;
}

json CrmTools::Err(McpClient& c, const std::string& tool, const json& args,
                   const std::string& code) {
  json err = c.CallToolError(tool, args);
  EXPECT_EQ(err.value("code", ""), code) << tool << " " << args.dump() << ": " << err.dump();
  return err;
}

int64_t CrmTools::NewContact(McpClient& c, const std::string& email, const json& fields) {
  json args = fields;
  args["email"] = email;
  return Ok(c, "create_contact", args)["contact"].value("id", int64_t{0});
}

int64_t CrmTools::NewList(McpClient& c, const std::string& name) {
  return Ok(c, "create_list", {{"name", name}})["list"].value("id", int64_t{0});
}

int64_t CrmTools::NewTag(McpClient& c, const std::string& name) {
  return Ok(c, "create_tag", {{"name", name}})["tag"].value("id", int64_t{0});
}

std::string CrmTools::Preview(McpClient& c, const std::string& tool, const json& args) {
  json out = Ok(c, tool, args);
  EXPECT_EQ(out.value("status", ""), "confirmation_required") << tool << ": " << out.dump();
  EXPECT_EQ(out.value("action", ""), tool) << out.dump();
  return out.value("confirmation_token", "");
}

json CrmTools::FindContact(McpClient& c, int64_t id) {
  auto r = c.CallTool("get_contact", {{"id", id}});
  if (r.is_tool_error() && r.structured()["error"].value("code", "") == "not_found") return nullptr;
  EXPECT_TRUE(r.ok() && !r.is_tool_error()) << r.raw;
  if (!r.ok() || r.is_tool_error()) return nullptr;
  return r.structured()["contact"];
}

int64_t CrmTools::SendingCampaign(McpClient& c, int64_t list) {
  int64_t member = NewContact(c, "audience" + std::to_string(list) + "@example.com");
  Ok(c, "add_contact_to_lists", {{"contact_ids", {member}}, {"lists", {list}}});
  json created = Ok(c, "create_campaign",
                    {{"name", "Launch " + std::to_string(list)},
                     {"subject", "Hello"},
                     {"from_email", "team@example.com"},
                     {"text_body", "Hi. Unsubscribe: {{unsubscribe_url}}"},
                     {"audience", {{"lists", {list}}}}});
  int64_t id = created["campaign"].value("id", int64_t{0});
  std::string token = Preview(c, "activate_campaign", {{"id", id}});
  json done = Ok(c, "confirm_action", {{"confirmation_token", token}});
  EXPECT_EQ(done.value("status", ""), "done") << done.dump();
  EXPECT_EQ(Ok(c, "get_campaign", {{"id", id}})["campaign"].value("status", ""), "sending");
  return id;
}

int64_t CrmTools::ActiveAutomation(McpClient& c, int64_t tag) {
  json created =
      Ok(c, "create_automation",
         {{"name", "Tagged " + std::to_string(tag)},
          {"trigger", {{"type", "tag_added"}, {"tag_id", tag}}},
          {"steps",
           {{{"type", "send_email"}, {"subject", "Hi"}, {"text_body", "b {{unsubscribe_url}}"}}}}});
  int64_t id = created["automation"].value("id", int64_t{0});
  std::string token = Preview(c, "activate_automation", {{"id", id}});
  json done = Ok(c, "confirm_action", {{"confirmation_token", token}});
  EXPECT_EQ(done.value("status", ""), "done") << done.dump();
  EXPECT_EQ(Ok(c, "get_automation", {{"id", id}})["automation"].value("status", ""), "active");
  return id;
}

json CrmTools::Fingerprint() {
  json f = json::object();
  for (const char* sql : {
           "SELECT COUNT(*) FROM contacts",
           "SELECT COALESCE(SUM(revision), 0) FROM contacts",
           "SELECT COUNT(*) FROM lists",
           "SELECT COALESCE(SUM(revision), 0) FROM lists",
           "SELECT COUNT(*) FROM tags",
           "SELECT COALESCE(SUM(revision), 0) FROM tags",
           "SELECT COUNT(*) FROM contact_lists",
           "SELECT COUNT(*) FROM contact_tags",
           "SELECT COUNT(*) FROM audit_log",
           // The contact events a write makes; not the email.* events of messages that a
           // campaign or automation made active by the test sends in the background meanwhile.
           "SELECT COUNT(*) FROM outbox_events WHERE event_type NOT LIKE 'email.%'",
           "SELECT COUNT(*) FROM idempotency_keys",
           "SELECT COUNT(*) FROM confirmations",
           "SELECT COUNT(*) FROM confirmations WHERE status = 'pending'",
           "SELECT revision FROM settings",
       }) {
    f[sql] = Count(sql);
  }
  return f;
}

int64_t CrmTools::Count(const std::string& sql, const std::vector<store::Value>& params) {
  auto n = db_->Read([&](store::Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne(sql, params);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Error::NotFound("no row"));
    return (*row)->Int(0);
  });
  EXPECT_TRUE(n.has_value()) << sql;
  return n.value_or(-1);
}

}  // namespace crmd::testing

#include "tests/integration/tools_marketing/fixture.h"

#include "src/crm/contacts.h"
#include "src/crm/contacts_repo.h"

namespace crmd::testing {

using nlohmann::json;

namespace {

// Unless a test says otherwise, a campaign sends one message and then one per 100 s, so
// that "sending" is a state the tests can look at (delivery_test.cc sends for real).
TestServerOptions SlowSending(TestServerOptions options) {
  if (!options.configure) options.configure = [](Config& c) { c.mail_rate_per_second = 0.01; };
  // These suites are about the marketing tools; human approval is tests/integration/approvals.
  if (options.approval_policy.is_null()) options.approval_policy = AssistantMayConfirmAlone();
  // The pre-send check requires a postal address (docs/marketing.md).
  if (options.company_address.empty()) options.company_address = "1 Test Street, Testville";
  return options;
}

}  // namespace

MarketingTools::MarketingTools(TestServerOptions options)
    : server_(SlowSending(std::move(options))) {
  auto db = store::Open(server_.database_url(), 1);
  EXPECT_TRUE(db.has_value());
  if (db) db_ = std::move(*db);
}

std::unique_ptr<McpClient> MarketingTools::Client(const std::string& scopes,
                                                  const std::string& client_id,
                                                  const std::string& subject) {
  std::vector<std::string> list;
  size_t start = 0;
  while (start < scopes.size()) {
    auto comma = scopes.find(',', start);
    if (comma == std::string::npos) comma = scopes.size();
    if (comma > start) list.push_back(scopes.substr(start, comma - start));
    start = comma + 1;
  }
  std::string token = MintTestToken(
      server_, TestTokenOptions{.scopes = list, .client_id = client_id, .subject = subject});
  auto c = std::make_unique<McpClient>(server_, McpClientOptions{.token = token});
  auto r = c->Initialize();
  EXPECT_TRUE(r.ok()) << r.raw;
  return c;
}

json MarketingTools::Call(McpClient& c, const std::string& tool, const json& args) {
  auto r = c.CallTool(tool, args);
  EXPECT_TRUE(r.ok()) << tool << ": " << r.raw;
  if (!r.ok()) return json();
  return r.structured();
}

json MarketingTools::ExpectToolError(McpClient& c, const std::string& tool, const json& args,
                                     const std::string& code) {
  auto r = c.CallTool(tool, args);
  EXPECT_TRUE(r.is_tool_error()) << tool << " " << args.dump() << ": " << r.raw;
  if (!r.is_tool_error()) return json();
  json err = r.structured().value("error", json());
  EXPECT_EQ(err.value("code", ""), code) << tool << ": " << r.raw;
  return err;
}

int64_t MarketingTools::AddList(const std::string& name) {
  auto id = db_->Write([&](store::Conn& c) {
    return c.InsertReturningId(
        "INSERT INTO lists (name, created_at, updated_at) VALUES (?, 0, 0) RETURNING id", {name});
  });
  EXPECT_TRUE(id.has_value());
  return id.value_or(0);
}

int64_t MarketingTools::AddTag(const std::string& name) {
  auto id = db_->Write([&](store::Conn& c) {
    return c.InsertReturningId(
        "INSERT INTO tags (name, created_at, updated_at) VALUES (?, 0, 0) RETURNING id", {name});
  });
  EXPECT_TRUE(id.has_value());
  return id.value_or(0);
}

int64_t MarketingTools::AddContact(const std::string& email, const std::string& status) {
  // Through the repository's insert, which also counts the contact (migration 0059).
  auto id = db_->Write([&](store::Conn& c) {
    return crm::contacts_repo::InsertContact(c, crm::Contact{.email = email,
                                                             .status = status,
                                                             .type = "lead",
                                                             .source = "test",
                                                             .revision = 1,
                                                             .created_at = 1760000000,
                                                             .updated_at = 1760000000});
  });
  EXPECT_TRUE(id.has_value());
  return id.value_or(0);
}

void MarketingTools::InList(int64_t contact, int64_t list) {
  Exec("INSERT INTO contact_lists (contact_id, list_id, created_at) VALUES (?, ?, 0)",
       {contact, list});
}

void MarketingTools::Tagged(int64_t contact, int64_t tag) {
  Exec("INSERT INTO contact_tags (contact_id, tag_id, created_at) VALUES (?, ?, 0)",
       {contact, tag});
}

int64_t MarketingTools::Count(const std::string& sql, const std::vector<store::Value>& params) {
  auto n = db_->Read([&](store::Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne(sql, params);
    if (!row) return Fail(row.error());
    return (*row)->Int(0);
  });
  EXPECT_TRUE(n.has_value());
  return n.value_or(-1);
}

void MarketingTools::Exec(const std::string& sql, const std::vector<store::Value>& params) {
  auto n = db_->Write([&](store::Conn& c) { return c.Exec(sql, params); });
  EXPECT_TRUE(n.has_value()) << (n ? "" : n.error().detail);
}

int64_t MarketingTools::ReadyCampaign(McpClient& c) {
  int64_t list = AddList("list-" + std::to_string(Count("SELECT COUNT(*) FROM lists")));
  for (int i = 0; i < 2; ++i) {
    InList(AddContact("r" + std::to_string(list) + "-" + std::to_string(i) + "@example.com"), list);
  }
  json out = Call(c, "create_campaign",
                  {{"name", "Launch"},
                   {"subject", "Hello"},
                   {"from_email", "team@example.com"},
                   {"text_body", "Hi. Unsubscribe: {{unsubscribe_url}}"},
                   {"audience", {{"lists", {list}}}}});
  return out["campaign"].value("id", int64_t{0});
}

}  // namespace crmd::testing

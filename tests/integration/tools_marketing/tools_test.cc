// Every marketing tool through /mcp: success, a schema violation naming the field, a
// scope refusal (HTTP 403 insufficient_scope) and not_found.
#include <functional>

#include "tests/integration/tools_marketing/fixture.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

struct ToolCase {
  std::string tool;
  std::string scope;
  // Builds the arguments of a successful call (may create records first).
  std::function<json(MarketingTools&, McpClient&)> ok;
  std::string ok_key;  // a key the successful structuredContent has
  json invalid;        // violates the input schema
  std::string invalid_field;
  json missing;  // names a record that does not exist; null = no id argument
};

class AllTools : public MarketingTools, public ::testing::WithParamInterface<ToolCase> {
 public:
  json CallOk(McpClient& c, const std::string& tool, const json& args) {
    return Call(c, tool, args);
  }
  int64_t NewCampaign(McpClient& c) {
    return CallOk(c, "create_campaign", {{"name", "c"}})["campaign"].value("id", int64_t{0});
  }
  int64_t NewAutomation(McpClient& c) {
    return CallOk(c, "create_automation",
                  {{"name", "a"},
                   {"trigger", {{"type", "contact_created"}}},
                   {"steps", {{{"type", "wait"}, {"days", 1}}}}})["automation"]
        .value("id", int64_t{0});
  }
  int64_t NewSequence(McpClient& c) {
    return CallOk(c, "create_sequence",
                  {{"name", "s"}, {"emails", {{{"subject", "1"}, {"text_body", "b"}}}}})["sequence"]
        .value("id", int64_t{0});
  }
  int64_t Ready(McpClient& c) { return ReadyCampaign(c); }
  // One recipient still pending, due far ahead: the server's delivery loop marks a
  // sending campaign with nobody left to send to "sent", and would race the call.
  void PendingRecipient(int64_t campaign) {
    int64_t contact = AddContact("pending-" + std::to_string(campaign) + "@example.com");
    Exec(
        "INSERT INTO campaign_recipients (campaign_id, contact_id, status, updated_at, due_at) "
        "VALUES (?, ?, 'pending', 0, ?)",
        {campaign, contact, int64_t{4102444800}});
  }
  void SetStatus(const char* table, int64_t id, const char* status) {
    Exec(std::string("UPDATE ") + table + " SET status = ? WHERE id = ?",
         {std::string(status), id});
  }
};

std::vector<ToolCase> Cases() {
  auto self = [](MarketingTools& t) -> AllTools& { return static_cast<AllTools&>(t); };
  json bad_id = {{"id", "seven"}};
  json none = nullptr;
  json missing = {{"id", 999999}};
  return {
      {"list_campaigns",
       "campaigns:read",
       [](MarketingTools&, McpClient&) { return json::object(); },
       "campaigns",
       {{"limit", 0}},
       "limit",
       none},
      {"get_campaign", "campaigns:read",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewCampaign(c)}};
       },
       "campaign", bad_id, "id", missing},
      {"create_campaign",
       "campaigns:write",
       [](MarketingTools&, McpClient&) {
         return json{{"name", "New"}};
       },
       "campaign",
       {{"name", "x"}, {"from_email", 5}},
       "from_email",
       none},
      {"update_campaign",
       "campaigns:write",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewCampaign(c)}, {"expected_revision", 1}, {"subject", "S"}};
       },
       "campaign",
       {{"id", 1}},
       "expected_revision",
       {{"id", 999999}, {"expected_revision", 1}}},
      {"activate_campaign", "campaigns:activate",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).Ready(c)}};
       },
       "confirmation_token", bad_id, "id", missing},
      {"pause_campaign",
       "campaigns:write",
       [=](MarketingTools& t, McpClient& c) {
         int64_t id = self(t).NewCampaign(c);
         self(t).PendingRecipient(id);
         self(t).SetStatus("campaigns", id, "sending");
         return json{{"id", id}};
       },
       "campaign",
       {{"id", 0}},
       "id",
       missing},
      {"delete_campaign", "campaigns:delete",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewCampaign(c)}};
       },
       "confirmation_token", bad_id, "id", missing},
      {"list_automations",
       "automations:read",
       [](MarketingTools&, McpClient&) {
         return json{{"status", "draft"}};
       },
       "automations",
       {{"status", "running"}},
       "status",
       none},
      {"get_automation", "automations:read",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewAutomation(c)}};
       },
       "automation", bad_id, "id", missing},
      {"create_automation",
       "automations:write",
       [](MarketingTools&, McpClient&) {
         return json{{"name", "A"}, {"trigger", {{"type", "contact_created"}}}};
       },
       "automation",
       {{"name", "A"}, {"trigger", {{"type", "birthday"}}}},
       "trigger",
       none},
      {"update_automation",
       "automations:write",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewAutomation(c)}, {"expected_revision", 1}, {"name", "B"}};
       },
       "automation",
       {{"id", 1}, {"expected_revision", 1}, {"steps", {{{"type", "fly"}}}}},
       "steps",
       {{"id", 999999}, {"expected_revision", 1}}},
      {"activate_automation", "automations:activate",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewAutomation(c)}};
       },
       "confirmation_token", bad_id, "id", missing},
      {"deactivate_automation", "automations:write",
       [=](MarketingTools& t, McpClient& c) {
         int64_t id = self(t).NewAutomation(c);
         self(t).SetStatus("automations", id, "active");
         return json{{"id", id}};
       },
       "automation", bad_id, "id", missing},
      {"delete_automation", "automations:delete",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewAutomation(c)}};
       },
       "confirmation_token", bad_id, "id", missing},
      {"list_sequences",
       "sequences:read",
       [](MarketingTools&, McpClient&) { return json::object(); },
       "sequences",
       {{"cursor", 5}},
       "cursor",
       none},
      {"get_sequence", "sequences:read",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewSequence(c)}};
       },
       "sequence", bad_id, "id", missing},
      {"create_sequence",
       "sequences:write",
       [](MarketingTools&, McpClient&) {
         return json{{"name", "Drip"}};
       },
       "sequence",
       {{"name", "Drip"}, {"emails", {{{"text_body", "no subject"}}}}},
       "emails",
       none},
      {"update_sequence",
       "sequences:write",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewSequence(c)}, {"expected_revision", 1}, {"name", "D2"}};
       },
       "sequence",
       {{"id", 1}, {"expected_revision", "1"}},
       "expected_revision",
       {{"id", 999999}, {"expected_revision", 1}}},
      {"set_sequence_status",
       "sequences:write",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewSequence(c)}, {"status", "active"}};
       },
       "sequence",
       {{"id", 1}, {"status", "running"}},
       "status",
       {{"id", 999999}, {"status", "active"}}},
      {"get_dashboard",
       "reports:read",
       [](MarketingTools&, McpClient&) { return json::object(); },
       "contacts",
       {{"verbose", true}},
       "verbose",
       none},
      {"get_contacts_report",
       "reports:read",
       [](MarketingTools&, McpClient&) {
         return json{{"from", "2025-10-01"}, {"to", "2025-10-15"}, {"interval", "week"}};
       },
       "series",
       {{"interval", "month"}},
       "interval",
       none},
      {"get_campaign_report", "reports:read",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewCampaign(c)}};
       },
       "outcomes", bad_id, "id", missing},
      {"get_automation_report", "reports:read",
       [=](MarketingTools& t, McpClient& c) {
         return json{{"id", self(t).NewAutomation(c)}};
       },
       "steps", bad_id, "id", missing},
  };
}

TEST_P(AllTools, SucceedsRejectsBadArgumentsRefusesWithoutScopeAndReportsNotFound) {
  const ToolCase& tc = GetParam();
  auto c = Client();
  json args = tc.ok(*this, *c);
  json out = Call(*c, tc.tool, args);
  EXPECT_TRUE(out.contains(tc.ok_key)) << tc.tool << ": " << out.dump();

  auto bad = c->CallTool(tc.tool, tc.invalid);
  ASSERT_TRUE(bad.is_tool_error()) << tc.tool << ": " << bad.raw;
  EXPECT_NE(bad.structured().dump().find(tc.invalid_field), std::string::npos)
      << tc.tool << " should name " << tc.invalid_field << ": " << bad.raw;

  // Every scope but the tool's own.
  std::string others;
  for (const char* s :
       {"campaigns:read", "campaigns:write", "campaigns:activate", "campaigns:delete",
        "automations:read", "automations:write", "automations:activate", "automations:delete",
        "sequences:read", "sequences:write", "reports:read"}) {
    if (tc.scope != s) others += std::string(others.empty() ? "" : ",") + s;
  }
  auto weak = Client(others);
  auto refused = weak->CallTool(tc.tool, args);
  EXPECT_EQ(refused.status, 403) << tc.tool << ": " << refused.raw;

  if (!tc.missing.is_null()) ExpectToolError(*c, tc.tool, tc.missing, "not_found");
}

INSTANTIATE_TEST_SUITE_P(Marketing, AllTools, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<ToolCase>& i) { return i.param.tool; });

TEST_F(MarketingTools, ToolsListHasAllTwentyThreeMarketingTools) {
  auto c = Client();
  json tools = c->ListAllTools();
  int found = 0;
  for (const auto& t : tools) {
    for (const char* n : {"list_campaigns",        "get_campaign",         "create_campaign",
                          "update_campaign",       "activate_campaign",    "pause_campaign",
                          "delete_campaign",       "list_automations",     "get_automation",
                          "create_automation",     "update_automation",    "activate_automation",
                          "deactivate_automation", "delete_automation",    "list_sequences",
                          "get_sequence",          "create_sequence",      "update_sequence",
                          "set_sequence_status",   "get_dashboard",        "get_contacts_report",
                          "get_campaign_report",   "get_automation_report"}) {
      if (t.value("name", "") == n) ++found;
    }
  }
  EXPECT_EQ(found, 23);
}

TEST_F(MarketingTools, UpdateWithStaleRevisionReturnsTheCurrentRecord) {
  auto c = Client();
  int64_t id = Call(*c, "create_campaign", {{"name", "v1"}})["campaign"]["id"];
  Call(*c, "update_campaign", {{"id", id}, {"expected_revision", 1}, {"name", "v2"}});
  json err =
      ExpectToolError(*c, "update_campaign", {{"id", id}, {"expected_revision", 1}, {"name", "v3"}},
                      "revision_conflict");
  EXPECT_EQ(err["details"]["current"]["name"], "v2");
  EXPECT_EQ(err["details"]["current"]["revision"], 2);
}

TEST_F(MarketingTools, CreateWithIdempotencyKeyReturnsTheFirstResult) {
  auto c = Client();
  json a = Call(
      *c, "create_automation",
      {{"name", "once"}, {"trigger", {{"type", "contact_created"}}}, {"idempotency_key", "k-1"}});
  json b = Call(
      *c, "create_automation",
      {{"name", "once"}, {"trigger", {{"type", "contact_created"}}}, {"idempotency_key", "k-1"}});
  EXPECT_EQ(a["automation"]["id"], b["automation"]["id"]);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automations"), 1);
}

// The service keeps the key with the create (one transaction) and a repeat answers the
// record first created as it is now, as create_contact and create_list always did (the tool
// face used to replay a snapshot of the first answer).
TEST_F(MarketingTools, CreateReplayAnswersTheRecordAsItIsNow) {
  auto c = Client();
  json a = Call(*c, "create_campaign", {{"name", "once"}, {"idempotency_key", "k-2"}});
  int64_t id = a["campaign"]["id"];
  Call(*c, "update_campaign", {{"id", id}, {"expected_revision", 1}, {"name", "renamed"}});
  json b = Call(*c, "create_campaign", {{"name", "once"}, {"idempotency_key", "k-2"}});
  EXPECT_EQ(b["campaign"]["id"], id);
  EXPECT_EQ(b["campaign"]["name"], "renamed");
  EXPECT_EQ(b["campaign"]["revision"], 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaigns"), 1);
}

TEST_F(MarketingTools, ListsPaginateWithNextCursor) {
  auto c = Client();
  for (int i = 0; i < 3; ++i) Call(*c, "create_sequence", {{"name", "s" + std::to_string(i)}});
  json p1 = Call(*c, "list_sequences", {{"limit", 2}});
  ASSERT_EQ(p1["sequences"].size(), 2u);
  ASSERT_TRUE(p1["next_cursor"].is_string());
  json p2 = Call(*c, "list_sequences", {{"limit", 2}, {"cursor", p1["next_cursor"]}});
  ASSERT_EQ(p2["sequences"].size(), 1u);
  EXPECT_EQ(p2["sequences"][0]["name"], "s2");
  EXPECT_TRUE(p2["next_cursor"].is_null());
}

}  // namespace
}  // namespace crmd::testing

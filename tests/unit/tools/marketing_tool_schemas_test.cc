#include <gtest/gtest.h>

#include <map>

#include "src/core/embedded.h"
#include "src/marketing/automations.h"
#include "src/marketing/campaigns.h"
#include "src/marketing/reports.h"
#include "src/marketing/sequences.h"
#include "src/mcp/json_schema.h"
#include "src/mcp/registry.h"
#include "tests/unit/marketing/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;

// TOOLS.md: name -> (scope, kind). R read-only, W write, D destructive.
const std::map<std::string, std::pair<std::string, char>>& Catalogue() {
  static const std::map<std::string, std::pair<std::string, char>> k{
      {"list_campaigns", {"campaigns:read", 'R'}},
      {"get_campaign", {"campaigns:read", 'R'}},
      {"create_campaign", {"campaigns:write", 'W'}},
      {"update_campaign", {"campaigns:write", 'W'}},
      {"activate_campaign", {"campaigns:activate", 'W'}},
      {"pause_campaign", {"campaigns:write", 'W'}},
      {"delete_campaign", {"campaigns:delete", 'D'}},
      {"list_automations", {"automations:read", 'R'}},
      {"get_automation", {"automations:read", 'R'}},
      {"create_automation", {"automations:write", 'W'}},
      {"update_automation", {"automations:write", 'W'}},
      {"activate_automation", {"automations:activate", 'W'}},
      {"deactivate_automation", {"automations:write", 'W'}},
      {"delete_automation", {"automations:delete", 'D'}},
      {"list_sequences", {"sequences:read", 'R'}},
      {"get_sequence", {"sequences:read", 'R'}},
      {"create_sequence", {"sequences:write", 'W'}},
      {"update_sequence", {"sequences:write", 'W'}},
      {"set_sequence_status", {"sequences:write", 'W'}},
      {"get_dashboard", {"reports:read", 'R'}},
      {"get_contacts_report", {"reports:read", 'R'}},
      {"get_campaign_report", {"reports:read", 'R'}},
      {"get_automation_report", {"reports:read", 'R'}},
  };
  return k;
}

json Descriptor(const std::string& name) {
  auto f = embedded::Find("tools/" + name + ".json");
  EXPECT_TRUE(f.has_value()) << name;
  return f ? json::parse(*f) : json();
}

TEST(MarketingToolSchemas, EveryToolRegistersWithItsTools_mdScopeAndAnnotations) {
  mcp::ToolRegistry registry;
  for (const auto& [name, spec] : Catalogue()) {
    auto st = registry.Register(name, [](const mcp::ToolContext&, const json&) {
      return mcp::ToolOutcome::Ok(json::object());
    });
    ASSERT_TRUE(st) << name << ": " << st.error().message;
    json d = Descriptor(name);
    EXPECT_EQ(d["scope"], spec.first) << name;
    EXPECT_EQ(d["annotations"]["readOnlyHint"], spec.second == 'R') << name;
    EXPECT_EQ(d["annotations"]["destructiveHint"], spec.second == 'D') << name;
    EXPECT_EQ(d["inputSchema"]["additionalProperties"], false) << name;
    EXPECT_GT(d["description"].get<std::string>().size(), 60u) << name;
  }
  EXPECT_EQ(registry.size(), 23u);
}

TEST(MarketingToolSchemas, UseOnlyKeywordsTools_mdAllows) {
  const std::set<std::string> allowed{
      "type",        "properties", "required", "additionalProperties",
      "enum",        "const",      "minimum",  "maximum",
      "minLength",   "maxLength",  "pattern",  "format",
      "items",       "minItems",   "maxItems", "oneOf",
      "description", "title"};
  std::function<void(const json&, const std::string&)> walk = [&](const json& s,
                                                                  const std::string& where) {
    ASSERT_TRUE(s.is_object()) << where;
    for (const auto& [k, v] : s.items()) {
      EXPECT_TRUE(allowed.count(k)) << where << " uses " << k;
      if (k == "properties") {
        for (const auto& [p, sub] : v.items()) walk(sub, where + "." + p);
      } else if (k == "items") {
        walk(v, where + "[]");
      } else if (k == "oneOf") {
        for (const auto& sub : v) walk(sub, where + "|");
      }
    }
  };
  for (const auto& [name, spec] : Catalogue()) {
    json d = Descriptor(name);
    walk(d["inputSchema"], name + ".in");
    walk(d["outputSchema"], name + ".out");
  }
}

// Real service results validate against the output schemas (the registry rejects
// mismatches at call time, so a drift would break the tool).
class MarketingOutputs : public testing::MarketingDb {
 protected:
  void ExpectValid(const std::string& tool, const json& out) {
    auto schema = mcp::CompiledSchema::Compile(Descriptor(tool)["outputSchema"]);
    ASSERT_TRUE(schema) << tool;
    auto v = (*schema)->Validate(out);
    EXPECT_FALSE(v.has_value()) << tool << ": " << (v ? v->message : "") << "\n" << out.dump();
  }
};

TEST_F(MarketingOutputs, ServiceResultsMatchTheOutputSchemas) {
  int64_t list = AddList("news");
  int64_t tag = AddTag("t");
  InList(AddContact("a@x.io"), list);
  marketing::CampaignService campaigns(*db_, clock_);
  auto k = campaigns.Create(actor_, {{"name", "n"},
                                     {"subject", "s"},
                                     {"from_email", "a@b.io"},
                                     {"text_body", "t"},
                                     {"audience", {{"lists", {list}}}},
                                     {"send_at", "2030-01-01T00:00:00Z"}});
  ASSERT_TRUE(k);
  ExpectValid("get_campaign", {{"campaign", ToJson(*k, true)}});
  ExpectValid("list_campaigns", {{"campaigns", {ToJson(*k, false)}}, {"next_cursor", nullptr}});
  marketing::AutomationService automations(*db_, clock_);
  auto a = automations.Create(actor_, {{"name", "a"},
                                       {"trigger", {{"type", "tag_added"}, {"tag_id", tag}}},
                                       {"steps", {{{"type", "wait"}, {"days", 1}}}}});
  ASSERT_TRUE(a);
  ExpectValid("get_automation", {{"automation", ToJson(*a, true)}});
  ExpectValid("list_automations", {{"automations", {ToJson(*a, false)}}, {"next_cursor", "x"}});
  marketing::SequenceService sequences(*db_, clock_);
  auto q = sequences.Create(actor_,
                            {{"name", "q"}, {"emails", {{{"subject", "s"}, {"text_body", "b"}}}}});
  ASSERT_TRUE(q);
  ExpectValid("get_sequence", {{"sequence", ToJson(*q, true)}});
  ExpectValid("list_sequences", {{"sequences", {ToJson(*q, false)}}, {"next_cursor", nullptr}});
  marketing::ReportService reports(*db_, clock_);
  ExpectValid("get_dashboard", *reports.Dashboard());
  ExpectValid("get_contacts_report",
              *reports.ContactsReport({.from = 0, .to = 7 * 86400, .interval = "day"}));
  ExpectValid("get_campaign_report", *reports.CampaignReport(k->id));
  ExpectValid("get_automation_report", *reports.AutomationReport(a->id));
}

}  // namespace
}  // namespace crmd::crm

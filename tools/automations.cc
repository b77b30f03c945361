#include "tools/automations.h"

#include "src/crm/automations.h"
#include "tools/marketing_support.h"

namespace crmd::tools {
namespace {

using nlohmann::json;
using mcp::ToolContext;
using mcp::ToolOutcome;
using namespace marketing;

json CurrentAutomation(crm::Services& s, int64_t id) {
  auto a = s.automations->Get(id);
  return a ? crm::ToJson(*a, true) : json(nullptr);
}

ToolOutcome ListAutomations(crm::Services& s, const json& args) {
  std::optional<crm::AutomationStatus> status;
  if (args.contains("status")) status = crm::ParseAutomationStatus(StrArg(args, "status"));
  auto page = s.automations->List(status, StrArg(args, "cursor"),
                                  crm::ClampLimit(args.contains("limit")
                                                      ? std::optional<int64_t>(IntArg(args, "limit"))
                                                      : std::nullopt));
  if (!page) return ToolOutcome::Fail(page.error());
  json items = json::array();
  for (const auto& a : page->items) items.push_back(crm::ToJson(a, false));
  return ToolOutcome::Ok({{"automations", items},
                          {"next_cursor", page->next_cursor ? json(*page->next_cursor) : json(nullptr)}});
}

}  // namespace

Status RegisterAutomationTools(mcp::ToolRegistry& r, crm::Services& s) {
  struct Entry {
    const char* name;
    mcp::ToolHandler handler;
  };
  Entry entries[] = {
      {"list_automations", [&s](const ToolContext&, const json& a) { return ListAutomations(s, a); }},
      {"get_automation",
       [&s](const ToolContext&, const json& a) {
         auto x = s.automations->Get(IntArg(a, "id"));
         if (!x) return ToolOutcome::Fail(x.error());
         return ToolOutcome::Ok({{"automation", crm::ToJson(*x, true)}});
       }},
      {"create_automation",
       [&s](const ToolContext& ctx, const json& a) {
         return IdempotentCreate(s, ctx, a, "create_automation",
                                 [&](store::Conn& c, const crm::Actor& actor) -> Result<json> {
                                   auto x = s.automations->Create(c, actor, FieldsOf(a));
                                   if (!x) return Fail(x.error());
                                   return json{{"automation", crm::ToJson(*x, true)}};
                                 });
       }},
      {"update_automation",
       [&s](const ToolContext& ctx, const json& a) {
         int64_t id = IntArg(a, "id");
         return WriteOutcome(
             s.automations->Update(ActorOf(ctx), id, IntArg(a, "expected_revision"), FieldsOf(a)),
             "automation", [&] { return CurrentAutomation(s, id); });
       }},
      {"deactivate_automation",
       [&s](const ToolContext& ctx, const json& a) {
         int64_t id = IntArg(a, "id");
         return WriteOutcome(
             s.automations->Deactivate(ActorOf(ctx), id, IntArg(a, "expected_revision")),
             "automation", [&] { return CurrentAutomation(s, id); });
       }},
      {"activate_automation",
       [&s](const ToolContext& ctx, const json& a) {
         return RequestConfirmation(s, ctx, "activate_automation", {{"id", IntArg(a, "id")}});
       }},
      {"delete_automation",
       [&s](const ToolContext& ctx, const json& a) {
         return RequestConfirmation(s, ctx, "delete_automation", {{"id", IntArg(a, "id")}});
       }},
  };
  for (auto& e : entries) {
    if (auto st = r.Register(e.name, std::move(e.handler)); !st) return st;
  }
  return Ok();
}

}  // namespace crmd::tools

#include "tools/automations.h"

#include "src/marketing/automations.h"
#include "tools/marketing_support.h"

namespace crmd::tools {
using mcp::ToolContext;
using mcp::ToolOutcome;
using nlohmann::json;
using namespace marketing_support;

Status RegisterAutomationTools(mcp::ToolRegistry& r, marketing::Services& s) {
  struct Entry {
    const char* name;
    mcp::ToolHandler handler;
  };
  Entry entries[] = {
      {"list_automations",
       [&s](const ToolContext&, const json& a) {
         return ListRecords(*s.automations, a, marketing::ParseAutomationStatus, "automations");
       }},
      {"get_automation",
       [&s](const ToolContext&, const json& a) {
         return GetRecord(*s.automations, a, "automation");
       }},
      {"create_automation",
       [&s](const ToolContext& ctx, const json& a) {
         return CreateRecord(*s.automations, ctx, a, "automation");
       }},
      {"update_automation",
       [&s](const ToolContext& ctx, const json& a) {
         return UpdateRecord(*s.automations, ctx, a, "automation");
       }},
      {"deactivate_automation",
       [&s](const ToolContext& ctx, const json& a) {
         int64_t id = IntArg(a, "id");
         return WriteOutcome(
             s.automations->Deactivate(ActorFrom(ctx), id, IntArg(a, "expected_revision")),
             "automation", [&] { return CurrentJson(*s.automations, id); });
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

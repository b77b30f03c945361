#include "tools/campaigns.h"

#include "src/crm/campaigns.h"
#include "tools/marketing_support.h"

namespace crmd::tools {
namespace {

using nlohmann::json;
using mcp::ToolContext;
using mcp::ToolOutcome;
using namespace marketing;

json CurrentCampaign(crm::Services& s, int64_t id) {
  auto k = s.campaigns->Get(id);
  return k ? crm::ToJson(*k, true) : json(nullptr);
}

ToolOutcome ListCampaigns(crm::Services& s, const json& args) {
  std::optional<crm::CampaignStatus> status;
  if (args.contains("status")) status = crm::ParseCampaignStatus(StrArg(args, "status"));
  auto page = s.campaigns->List(status, StrArg(args, "cursor"),
                                crm::ClampLimit(args.contains("limit")
                                                    ? std::optional<int64_t>(IntArg(args, "limit"))
                                                    : std::nullopt));
  if (!page) return ToolOutcome::Fail(page.error());
  json items = json::array();
  for (const auto& k : page->items) items.push_back(crm::ToJson(k, false));
  return ToolOutcome::Ok({{"campaigns", items},
                          {"next_cursor", page->next_cursor ? json(*page->next_cursor) : json(nullptr)}});
}

}  // namespace

Status RegisterCampaignTools(mcp::ToolRegistry& r, crm::Services& s) {
  struct Entry {
    const char* name;
    mcp::ToolHandler handler;
  };
  Entry entries[] = {
      {"list_campaigns", [&s](const ToolContext&, const json& a) { return ListCampaigns(s, a); }},
      {"get_campaign",
       [&s](const ToolContext&, const json& a) {
         auto k = s.campaigns->Get(IntArg(a, "id"));
         if (!k) return ToolOutcome::Fail(k.error());
         return ToolOutcome::Ok({{"campaign", crm::ToJson(*k, true)}});
       }},
      {"create_campaign",
       [&s](const ToolContext& ctx, const json& a) {
         return IdempotentCreate(s, ctx, a, "create_campaign",
                                 [&](store::Conn& c, const crm::Actor& actor) -> Result<json> {
                                   auto k = s.campaigns->Create(c, actor, FieldsOf(a));
                                   if (!k) return Fail(k.error());
                                   return json{{"campaign", crm::ToJson(*k, true)}};
                                 });
       }},
      {"update_campaign",
       [&s](const ToolContext& ctx, const json& a) {
         int64_t id = IntArg(a, "id");
         return WriteOutcome(
             s.campaigns->Update(ActorOf(ctx), id, IntArg(a, "expected_revision"), FieldsOf(a)),
             "campaign", [&] { return CurrentCampaign(s, id); });
       }},
      {"pause_campaign",
       [&s](const ToolContext& ctx, const json& a) {
         int64_t id = IntArg(a, "id");
         return WriteOutcome(s.campaigns->Pause(ActorOf(ctx), id, IntArg(a, "expected_revision")),
                             "campaign", [&] { return CurrentCampaign(s, id); });
       }},
      {"activate_campaign",
       [&s](const ToolContext& ctx, const json& a) {
         return RequestConfirmation(s, ctx, "activate_campaign", {{"id", IntArg(a, "id")}});
       }},
      {"delete_campaign",
       [&s](const ToolContext& ctx, const json& a) {
         return RequestConfirmation(s, ctx, "delete_campaign", {{"id", IntArg(a, "id")}});
       }},
  };
  for (auto& e : entries) {
    if (auto st = r.Register(e.name, std::move(e.handler)); !st) return st;
  }
  return Ok();
}

}  // namespace crmd::tools

#include "tools/campaigns.h"

#include "src/marketing/campaigns.h"
#include "tools/marketing_support.h"

namespace crmd::tools {
using mcp::ToolContext;
using mcp::ToolOutcome;
using nlohmann::json;
using namespace marketing_support;

namespace {

// activate_campaign with test_recipients: the campaign sent now to those addresses only,
// nothing confirmed and nothing changed (marketing::CampaignTestSends).
ToolOutcome TestSend(marketing::Services& s, const ToolContext& ctx, const json& a) {
  if (a.contains("resend"))
    return FailWith(Error::Invalid("test_recipients: not with resend (a test is one message)"));
  auto sent = s.test_sends->Send(ActorFrom(ctx), IntArg(a, "id"), a["test_recipients"],
                                 a.value("test_fields", json(nullptr)));
  if (!sent) return FailWith(sent.error());
  return ToolOutcome::Ok(std::move(*sent));
}

}  // namespace

Status RegisterCampaignTools(mcp::ToolRegistry& r, marketing::Services& s) {
  struct Entry {
    const char* name;
    mcp::ToolHandler handler;
  };
  Entry entries[] = {
      {"list_campaigns",
       [&s](const ToolContext&, const json& a) {
         return ListRecords(*s.campaigns, a, marketing::ParseCampaignStatus, "campaigns");
       }},
      {"get_campaign",
       [&s](const ToolContext&, const json& a) { return GetRecord(*s.campaigns, a, "campaign"); }},
      {"create_campaign",
       [&s](const ToolContext& ctx, const json& a) {
         return CreateRecord(*s.campaigns, ctx, a, "campaign");
       }},
      {"update_campaign",
       [&s](const ToolContext& ctx, const json& a) {
         return UpdateRecord(*s.campaigns, ctx, a, "campaign");
       }},
      {"pause_campaign",
       [&s](const ToolContext& ctx, const json& a) {
         int64_t id = IntArg(a, "id");
         return WriteOutcome(s.campaigns->Pause(ActorFrom(ctx), id, IntArg(a, "expected_revision")),
                             "campaign", [&] { return CurrentJson(*s.campaigns, id); });
       }},
      {"activate_campaign",
       [&s](const ToolContext& ctx, const json& a) {
         if (a.contains("test_recipients")) return TestSend(s, ctx, a);
         // The sender's DNS is looked up here, before the preview's transaction, which then
         // finds it cached (a slow name server must not hold the database's writer).
         if (auto k = s.campaigns->Get(IntArg(a, "id")); k && !k->from_email.empty())
           (void)s.sender_auth->Check(k->from_email);
         // resend=undelivered is its own confirmable action (its preview counts the failed).
         const char* action =
             a.value("resend", "") == "undelivered" ? "resend_campaign" : "activate_campaign";
         return RequestConfirmation(s, ctx, action, {{"id", IntArg(a, "id")}});
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

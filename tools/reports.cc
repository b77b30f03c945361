#include "tools/reports.h"

#include "src/marketing/campaign_delivery.h"
#include "src/marketing/common.h"
#include "src/marketing/reports.h"
#include "tools/marketing_support.h"

namespace crmd::tools {
namespace {

using mcp::ToolContext;
using mcp::ToolOutcome;
using nlohmann::json;
using namespace marketing_support;

constexpr int64_t kDay = 86400;

ToolOutcome ContactsReport(marketing::Services& s, const json& a) {
  int64_t today = s.crm.options.clock->NowUnix() / kDay * kDay;
  marketing::ContactsReportRequest req{
      .from = today - 29 * kDay, .to = today + kDay, .interval = StrArg(a, "interval", "day")};
  for (auto [key, dst] : {std::pair{"from", &req.from}, std::pair{"to", &req.to}}) {
    if (!a.contains(key)) continue;
    auto t = marketing::ParseRfc3339(StrArg(a, key));
    if (!t) {
      return FailWith(Error::Invalid(std::string(key) + ": use YYYY-MM-DD or RFC 3339"));
    }
    *dst = *t;
  }
  return FromResult(s.reports->ContactsReport(req));
}

}  // namespace

Status RegisterReportTools(mcp::ToolRegistry& r, marketing::Services& s) {
  struct Entry {
    const char* name;
    mcp::ToolHandler handler;
  };
  Entry entries[] = {
      {"get_dashboard",
       [&s](const ToolContext&, const json&) { return FromResult(s.reports->Dashboard()); }},
      {"get_contacts_report",
       [&s](const ToolContext&, const json& a) { return ContactsReport(s, a); }},
      {"get_campaign_report",
       [&s](const ToolContext&, const json& a) {
         auto report = s.reports->CampaignReport(IntArg(a, "id"));
         if (report && a.contains("recipients") && a["recipients"].is_object()) {
           const json& q = a["recipients"];
           auto page = s.delivery->Recipients(IntArg(a, "id"), q.value("status", ""),
                                              q.value("cursor", ""), q.value("limit", 50));
           if (!page) return FromResult(Fail(page.error()));
           json items = json::array();
           for (const auto& row : page->items) items.push_back(marketing::ToJson(row));
           (*report)["recipients"] = {
               {"items", std::move(items)},
               {"next_cursor", page->next_cursor ? json(*page->next_cursor) : json(nullptr)}};
         }
         return FromResult(std::move(report));
       }},
      {"get_automation_report",
       [&s](const ToolContext&, const json& a) {
         return FromResult(s.reports->AutomationReport(IntArg(a, "id")));
       }},
  };
  for (auto& e : entries) {
    if (auto st = r.Register(e.name, std::move(e.handler)); !st) return st;
  }
  return Ok();
}

}  // namespace crmd::tools

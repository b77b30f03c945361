#include "src/marketing/reports.h"

#include <algorithm>
#include <map>
#include <vector>

#include "src/marketing/automation_runs_repo.h"
#include "src/marketing/automations.h"
#include "src/marketing/campaign_delivery.h"
#include "src/marketing/campaign_sends_repo.h"
#include "src/marketing/campaigns.h"
#include "src/marketing/campaigns_repo.h"
#include "src/marketing/common.h"
#include "src/marketing/reporting_repo.h"

namespace crmd::marketing {

using nlohmann::json;

Result<json> ReportService::Dashboard() const {
  int64_t now = clock_.NowUnix();
  return db_.Read([&](store::Conn& c) -> Result<json> {
    auto contacts = reporting_repo::ContactCounts(c);
    if (!contacts) return Fail(contacts.error());
    auto growth = reporting_repo::ContactGrowth(c, now);
    if (!growth) return Fail(growth.error());
    auto forms = reporting_repo::FormCounts(c, 10);
    if (!forms) return Fail(forms.error());
    auto campaigns = reporting_repo::CampaignSummary(c, 10);
    if (!campaigns) return Fail(campaigns.error());
    auto automations = reporting_repo::AutomationSummary(c, 10);
    if (!automations) return Fail(automations.error());
    auto sequences = reporting_repo::SequenceSummary(c);
    if (!sequences) return Fail(sequences.error());
    return json{{"generated_at", TimeJson(now)},
                {"contacts", *contacts},
                {"growth", *growth},
                {"forms", *forms},
                {"campaigns", *campaigns},
                {"automations", *automations},
                {"sequences", *sequences}};
  });
}

Result<json> ReportService::ContactsReport(const ContactsReportRequest& req) const {
  if (req.interval != "day" && req.interval != "week") {
    return Fail(Errc::kInvalidArgument, "interval: must be day or week");
  }
  if (req.to <= req.from) return Fail(Errc::kInvalidArgument, "to: must be after from");
  const int64_t bucket = req.interval == "day" ? 86400 : 7 * 86400;
  const int64_t buckets = (req.to - req.from + bucket - 1) / bucket;
  if (buckets > kMaxReportBuckets) {
    return Fail(Errc::kInvalidArgument, "to: the range spans more than " +
                                            std::to_string(kMaxReportBuckets) + " " + req.interval +
                                            "s; use a shorter range or interval week");
  }
  return db_.Read([&](store::Conn& c) -> Result<json> {
    // Counters kept as contacts change (migration 0053), not a scan of contacts.
    auto fresh = reporting_repo::NewContactsIn(c, req.from, req.to, bucket);
    if (!fresh) return Fail(fresh.error());
    std::map<int64_t, int64_t> counts(fresh->per_bucket.begin(), fresh->per_bucket.end());
    json series = json::array();
    int64_t in_range = 0;
    for (int64_t i = 0; i < buckets; ++i) {
      int64_t n = counts.count(i) ? counts[i] : 0;
      in_range += n;
      series.push_back({{"start", FormatRfc3339(req.from + i * bucket)}, {"new_contacts", n}});
    }
    const json& by_source = fresh->by_source;
    const json& by_status = fresh->by_status;
    int64_t start_total = fresh->created_before;
    return json{{"from", FormatRfc3339(req.from)},
                {"to", FormatRfc3339(req.to)},
                {"interval", req.interval},
                {"total_at_start", start_total},
                {"new_contacts", in_range},
                {"total_at_end", start_total + in_range},
                {"series", series},
                {"by_source", by_source},
                {"by_status", by_status}};
  });
}

Result<json> ReportService::CampaignReport(int64_t id) const {
  return db_.Read([&](store::Conn& c) -> Result<json> {
    auto k = campaigns_repo::Load(c, id);
    if (!k) return Fail(k.error());
    if (!*k) return Fail(Error::NotFound("campaign " + std::to_string(id) + " not found"));
    // Counters kept as each message and event is recorded (campaign_stats): no scan.
    auto st = campaign_sends_repo::LoadStats(c, id);
    if (!st) return Fail(st.error());
    const auto& s = *st;
    json outcomes = ToJson(s);
    auto rate = [](int64_t n, int64_t d) { return d == 0 ? 0.0 : static_cast<double>(n) / d; };
    json audience = {{"recipients_recorded", s.queued}};
    if (IsEditable((*k)->status)) {
      auto now = campaigns_repo::CountAudience(c, id);
      if (!now) return Fail(now.error());
      audience["resolves_now"] = *now;
    }
    // A bounce at RCPT left its recipient failed, never sent; only a bounce reported after
    // the relay took the message takes one off the delivered. Rates of delivery and
    // bounces are over every message that reached a verdict: sent, or refused at RCPT.
    int64_t delivered = s.sent - (s.bounced - s.bounced_unsent);
    if (delivered < 0) delivered = 0;
    const int64_t attempted = s.sent + s.bounced_unsent;
    return json{{"campaign", ToJson(**k, true)},
                {"audience", audience},
                {"outcomes", outcomes},
                {"totals",
                 {{"sent", s.sent},
                  {"delivered", delivered},
                  {"opened", s.opened},
                  {"clicked", s.clicked},
                  {"undelivered", s.failed}}},
                {"rates",
                 {{"delivery", rate(delivered, attempted)},
                  {"open", rate(s.opened, delivered)},
                  {"click", rate(s.clicked, delivered)},
                  {"bounce", rate(s.bounced, attempted)},
                  {"complaint", rate(s.complained, s.sent)},
                  {"unsubscribe", rate(s.unsubscribed, delivered)}}}};
  });
}

Result<json> ReportService::CampaignOutcomes(int64_t id) const {
  return db_.Read([&](store::Conn& c) -> Result<json> {
    auto st = campaign_sends_repo::LoadStats(c, id);
    if (!st) return Fail(st.error());
    return ToJson(*st);
  });
}

Result<CampaignActivity> ReportService::CampaignActivityReport(int64_t id, int64_t until) const {
  return db_.Read([&](store::Conn& c) -> Result<marketing::CampaignActivity> {
    auto k = campaigns_repo::Load(c, id);
    if (!k) return Fail(k.error());
    if (!*k) return Fail(Error::NotFound("campaign " + std::to_string(id) + " not found"));
    return LoadCampaignActivity(c, id, until);
  });
}

Result<json> ReportService::AutomationReport(int64_t id) const {
  return db_.Read([&](store::Conn& c) -> Result<json> {
    auto head = reporting_repo::FindAutomationHead(c, id);
    if (!head) return Fail(head.error());
    if (!*head) return Fail(Error::NotFound("automation " + std::to_string(id) + " not found"));
    json steps = json::parse((*head)->steps, nullptr, false);
    if (!steps.is_array()) steps = json::array();
    // Counters kept as runs move (automation_runs_repo.h), never a scan of the runs.
    auto stats = automation_runs_repo::LoadStats(c, id);
    if (!stats) return Fail(stats.error());
    auto step_rows = automation_runs_repo::LoadStepStats(c, id);
    if (!step_rows) return Fail(step_rows.error());
    std::map<int64_t, automation_runs_repo::StepStats> by_step(step_rows->begin(),
                                                               step_rows->end());
    const int64_t n_steps = std::max<int64_t>(static_cast<int64_t>(steps.size()),
                                              by_step.empty() ? 0 : by_step.rbegin()->first + 1);
    json per_step = json::array();
    for (int64_t i = 0; i < n_steps; ++i) {
      const auto& st = by_step[i];
      int64_t reached = st.done + st.failed + st.skipped;  // runs that got past step i
      std::string type = i < static_cast<int64_t>(steps.size()) ? steps[i].value("type", "") : "";
      json row = {{"index", i},      {"type", type},        {"reached", reached},
                  {"done", st.done}, {"failed", st.failed}, {"skipped", st.skipped}};
      if (type == "send_email") row["sent"] = st.done;
      per_step.push_back(std::move(row));
    }
    const int64_t total = stats->enrolled;
    return json{
        {"automation",
         {{"id", id},
          {"name", (*head)->name},
          {"status", (*head)->status},
          {"trigger", (*head)->trigger_type}}},
        {"enrolments",
         {{"total", total},
          {"active", stats->active()},
          {"completed", stats->completed},
          {"exited", stats->exited},
          {"cancelled", stats->cancelled}}},
        {"completion_rate", total == 0 ? 0.0 : static_cast<double>(stats->completed) / total},
        {"steps", per_step}};
  });
}

Status RebuildContactCounters(store::Database& db) {
  auto rebuilt = db.Write([](store::Conn& c) -> Result<bool> {
    if (auto st = reporting_repo::RebuildCounters(c); !st) return Fail(st.error());
    return true;
  });
  if (!rebuilt) return Fail(rebuilt.error());
  return Ok();
}

}  // namespace crmd::marketing

#include "src/crm/reports.h"

#include <algorithm>
#include <map>
#include <vector>

#include "src/crm/automations.h"
#include "src/crm/campaign_delivery.h"
#include "src/crm/campaign_repo.h"
#include "src/crm/campaign_send_repo.h"
#include "src/crm/campaigns.h"
#include "src/crm/dashboard.h"
#include "src/crm/marketing_common.h"

namespace crmd::crm {

using nlohmann::json;

Result<json> ReportService::Dashboard() const {
  int64_t now = clock_.NowUnix();
  return db_.Read([&](store::Conn& c) -> Result<json> {
    auto contacts = dashboard::ContactCounts(c);
    if (!contacts) return Fail(contacts.error());
    auto growth = dashboard::ContactGrowth(c, now);
    if (!growth) return Fail(growth.error());
    auto forms = dashboard::FormCounts(c, 10);
    if (!forms) return Fail(forms.error());
    auto campaigns = dashboard::CampaignSummary(c, 10);
    if (!campaigns) return Fail(campaigns.error());
    auto automations = dashboard::AutomationSummary(c, 10);
    if (!automations) return Fail(automations.error());
    auto sequences = dashboard::SequenceSummary(c);
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
    // Integer division groups rows into buckets inside the database (portable SQL).
    auto per_bucket = dashboard::NewContactsPerBucket(c, req.from, req.to, bucket);
    if (!per_bucket) return Fail(per_bucket.error());
    std::map<int64_t, int64_t> counts(per_bucket->begin(), per_bucket->end());
    json series = json::array();
    int64_t in_range = 0;
    for (int64_t i = 0; i < buckets; ++i) {
      int64_t n = counts.count(i) ? counts[i] : 0;
      in_range += n;
      series.push_back({{"start", FormatRfc3339(req.from + i * bucket)}, {"new_contacts", n}});
    }
    auto before = dashboard::ContactsCreatedBefore(c, req.from);
    if (!before) return Fail(before.error());
    auto by_source = dashboard::NewContactsBySource(c, req.from, req.to);
    if (!by_source) return Fail(by_source.error());
    auto by_status = dashboard::NewContactsByStatus(c, req.from, req.to);
    if (!by_status) return Fail(by_status.error());
    int64_t start_total = *before;
    return json{{"from", FormatRfc3339(req.from)},
                {"to", FormatRfc3339(req.to)},
                {"interval", req.interval},
                {"total_at_start", start_total},
                {"new_contacts", in_range},
                {"total_at_end", start_total + in_range},
                {"series", series},
                {"by_source", *by_source},
                {"by_status", *by_status}};
  });
}

Result<json> ReportService::CampaignReport(int64_t id) const {
  return db_.Read([&](store::Conn& c) -> Result<json> {
    auto k = campaign_repo::Load(c, id);
    if (!k) return Fail(k.error());
    if (!*k) return Fail(Error::NotFound("campaign " + std::to_string(id) + " not found"));
    // Counters kept as each message and event is recorded (campaign_stats): no scan.
    auto st = campaign_send_repo::LoadStats(c, id);
    if (!st) return Fail(st.error());
    const auto& s = *st;
    json outcomes = ToJson(s);
    auto rate = [](int64_t n, int64_t d) { return d == 0 ? 0.0 : static_cast<double>(n) / d; };
    json audience = {{"recipients_recorded", s.queued}};
    if (IsEditable((*k)->status)) {
      auto now = campaign_repo::CountAudience(c, id);
      if (!now) return Fail(now.error());
      audience["resolves_now"] = *now;
    }
    int64_t delivered = s.sent - s.bounced;
    if (delivered < 0) delivered = 0;
    return json{{"campaign", ToJson(**k, true)},
                {"audience", audience},
                {"outcomes", outcomes},
                {"totals", {{"sent", s.sent}, {"delivered", delivered}, {"opened", s.opened},
                            {"clicked", s.clicked}, {"undelivered", s.failed}}},
                {"rates", {{"delivery", rate(delivered, s.sent)},
                           {"open", rate(s.opened, delivered)},
                           {"click", rate(s.clicked, delivered)},
                           {"bounce", rate(s.bounced, s.sent)},
                           {"complaint", rate(s.complained, s.sent)},
                           {"unsubscribe", rate(s.unsubscribed, delivered)}}}};
  });
}

Result<json> ReportService::AutomationReport(int64_t id) const {
  return db_.Read([&](store::Conn& c) -> Result<json> {
    auto head = dashboard::FindAutomationHead(c, id);
    if (!head) return Fail(head.error());
    if (!*head) return Fail(Error::NotFound("automation " + std::to_string(id) + " not found"));
    json steps = json::parse((*head)->steps, nullptr, false);
    if (!steps.is_array()) steps = json::array();
    auto rows = dashboard::EnrolmentsByStepAndStatus(c, id);
    if (!rows) return Fail(rows.error());
    int64_t total = 0;
    std::map<std::string, int64_t> by_status{{"active", 0}, {"completed", 0}, {"exited", 0}};
    std::map<int64_t, int64_t> waiting, exited_at, past;  // past: current_step > i
    const int64_t n_steps = static_cast<int64_t>(steps.size());
    std::vector<int64_t> at(n_steps + 1, 0);  // enrolments whose current_step == i (not completed)
    int64_t completed = 0;
    for (const auto& [raw_step, status, n] : *rows) {
      int64_t step = std::min<int64_t>(std::max<int64_t>(raw_step, 0), n_steps);
      total += n;
      by_status[status] += n;
      if (status == "completed") {
        completed += n;
      } else {
        at[step] += n;
        if (status == "active") waiting[step] += n;
        else exited_at[step] += n;
      }
    }
    json per_step = json::array();
    // reached(i) = enrolments now at step i or beyond, plus those that completed.
    int64_t beyond = completed;
    std::vector<int64_t> reached(n_steps + 1, 0);
    for (int64_t i = n_steps; i >= 0; --i) {
      beyond += at[i];
      reached[i] = beyond;
    }
    for (int64_t i = 0; i < n_steps; ++i) {
      per_step.push_back({{"index", i},
                          {"type", steps[i].value("type", "")},
                          {"reached", reached[i]},
                          {"waiting", waiting[i]},
                          {"exited", exited_at[i]},
                          {"drop_off", exited_at[i]}});
    }
    return json{{"automation", {{"id", id}, {"name", (*head)->name}, {"status", (*head)->status},
                                {"trigger", (*head)->trigger_type}}},
                {"enrolments", {{"total", total},
                                {"active", by_status["active"]},
                                {"completed", by_status["completed"]},
                                {"exited", by_status["exited"]}}},
                {"completion_rate", total == 0 ? 0.0 : static_cast<double>(completed) / total},
                {"steps", per_step}};
  });
}

}  // namespace crmd::crm

#include "src/console/campaign_report_view.h"

#include <string>
#include <vector>

#include "src/console/charts.h"
#include "src/core/clock.h"

namespace crmd::console {

namespace {

using nlohmann::json;

constexpr const char* kReportSeriesNames[] = {"Sent", "Delivered", "Bounced", "Opened", "Clicked"};

std::string ReportCount(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer()
             ? std::to_string(j[key].get<int64_t>())
             : "0";
}

std::string ReportPercent(const json& rates, const char* key) {
  double r = rates.is_object() ? rates.value(key, 0.0) : 0.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", r * 100.0);
  return buf;
}

ViewList ReportTotals(const json& report) {
  const json& t = report.contains("totals") ? report["totals"] : json::object();
  const json& o = report.contains("outcomes") ? report["outcomes"] : json::object();
  const json& r = report.contains("rates") ? report["rates"] : json::object();
  std::vector<std::pair<std::string, std::string>> cells = {
      {"Recipients", ReportCount(o, "queued")},
      {"Waiting", ReportCount(o, "pending")},
      {"Sent", ReportCount(t, "sent")},
      {"Delivered", ReportCount(t, "delivered")},
      {"Bounced", ReportCount(o, "bounced")},
      {"Undelivered", ReportCount(t, "undelivered")},
      {"Skipped", ReportCount(o, "skipped")},
      {"Opened", ReportCount(t, "opened")},
      {"Clicked", ReportCount(t, "clicked")},
      {"Unsubscribed", ReportCount(o, "unsubscribed")},
      {"Complaints", ReportCount(o, "complained")},
      {"Open rate", ReportPercent(r, "open")},
      {"Click rate", ReportPercent(r, "click")},
      {"Bounce rate", ReportPercent(r, "bounce")}};
  ViewList out;
  for (auto& [label, value] : cells) out.emplace_back(ViewMap{{"label", label}, {"value", value}});
  return out;
}

// "2026-12-07 14:00" for hours, "2026-12-07" for days (UTC).
std::string ReportBucketLabel(int64_t start, int64_t width) {
  std::string t = FormatRfc3339(start);  // 2026-12-07T14:00:00Z
  return width < 86400 ? t.substr(0, 10) + " " + t.substr(11, 5) : t.substr(0, 10);
}

// Cumulative series (the chart shows how the totals grew) and the per-bucket table.
void AddReportTimeline(ViewMap& ctx, const marketing::CampaignActivity& a) {
  std::vector<std::string> labels;
  std::vector<ChartSeries> series;
  for (const char* name : kReportSeriesNames) series.push_back({.name = name, .values = {0}});
  // The chart's points are the buckets' ends, from zero at the first one's start.
  if (!a.buckets.empty()) labels.push_back(ReportBucketLabel(a.buckets.front().start, a.bucket_s));
  int64_t run[5] = {0, 0, 0, 0, 0};
  ViewList rows;
  for (const auto& b : a.buckets) {
    const int64_t v[5] = {b.sent, b.delivered, b.bounced, b.opened, b.clicked};
    ViewList cells;
    for (int i = 0; i < 5; ++i) {
      run[i] += v[i];
      series[i].values.push_back(run[i]);
      cells.emplace_back(std::to_string(v[i]));
    }
    labels.push_back(ReportBucketLabel(b.start + a.bucket_s, a.bucket_s));
    rows.emplace_back(
        ViewMap{{"at", ReportBucketLabel(b.start, a.bucket_s)}, {"values", std::move(cells)}});
  }
  const bool hours = a.bucket_s < 86400;
  const std::string unit = hours ? "hour" : (a.bucket_s == 86400 ? "day" : "period");
  ViewList names;
  for (const char* n : kReportSeriesNames) names.emplace_back(n);
  ctx.emplace("has_timeline", !a.buckets.empty());
  ctx.emplace("timeline_svg", LineChartSvg("Sent, delivered, bounced, opened and clicked, "
                                           "running totals by " +
                                               unit + " (UTC)",
                                           labels, series));
  ctx.emplace("timeline_caption", "Messages in each " + unit + " (UTC); the chart adds them up.");
  ctx.emplace("bucket_label", hours ? "Hour (UTC)" : "Day (UTC)");
  ctx.emplace("series_names", std::move(names));
  ctx.emplace("timeline", std::move(rows));
}

void AddReportLinks(ViewMap& ctx, const marketing::CampaignActivity& a) {
  std::vector<ChartBar> bars;
  ViewList rows;
  for (const auto& l : a.links) {
    bars.push_back({.label = l.url, .value = l.clicks});
    rows.emplace_back(ViewMap{{"url", l.url}, {"clicks", std::to_string(l.clicks)}});
  }
  ctx.emplace("has_links", !a.links.empty());
  ctx.emplace("links_svg", BarChartSvg("Clicks per link", bars));
  ctx.emplace("links", std::move(rows));
}

}  // namespace

void AddReportView(ViewMap& ctx, const json& report, const marketing::CampaignActivity& activity,
                   bool track_clicks) {
  ctx.emplace("has_report", true);
  ctx.emplace("totals", ReportTotals(report));
  ctx.emplace("track_clicks", track_clicks);
  AddReportTimeline(ctx, activity);
  AddReportLinks(ctx, activity);
}

}  // namespace crmd::console

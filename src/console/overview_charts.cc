#include "src/console/overview_charts.h"

#include <optional>
#include <string>
#include <vector>

#include "src/console/charts.h"

namespace crmd::console {

namespace {

using nlohmann::json;

int64_t ChartIntOf(const json& v) { return v.is_number_integer() ? v.get<int64_t>() : 0; }

ViewMap OverviewChart(const std::string& id, const std::string& title, std::string svg,
                      const std::string& caption, ViewList head, ViewList rows) {
  return ViewMap{{"id", id},           {"title", title},          {"svg", std::move(svg)},
                 {"caption", caption}, {"head", std::move(head)}, {"rows", std::move(rows)}};
}

// A {"name": count, ...} object as bars and a two-column table; nullopt when empty.
std::optional<ViewMap> OverviewCountsChart(const std::string& id, const std::string& title,
                                           const json& counts, const std::string& what) {
  if (!counts.is_object() || counts.empty()) return std::nullopt;
  std::vector<ChartBar> bars;
  ViewList rows;
  for (const auto& [name, n] : counts.items()) {
    bars.push_back({.label = name, .value = ChartIntOf(n)});
    rows.emplace_back(
        ViewMap{{"cells", ViewList{View(name), View(std::to_string(ChartIntOf(n)))}}});
  }
  return OverviewChart(id, title, BarChartSvg(title, bars),
                       title + ", as the table below lists them.",
                       ViewList{View(what), View("Count")}, std::move(rows));
}

// New contacts each day of the report and the running total.
std::optional<ViewMap> OverviewGrowthChart(const json& report) {
  if (!report.is_object() || !report.contains("series") || report["series"].empty())
    return std::nullopt;
  std::vector<std::string> labels;
  ChartSeries fresh{.name = "New"}, total{.name = "Total"};
  int64_t running = ChartIntOf(report.value("total_at_start", json(0)));
  ViewList rows;
  for (const json& b : report["series"]) {
    const std::string day = b.value("start", std::string()).substr(0, 10);
    const int64_t n = ChartIntOf(b.value("new_contacts", json(0)));
    running += n;
    labels.push_back(day);
    fresh.values.push_back(n);
    total.values.push_back(running);
    rows.emplace_back(ViewMap{
        {"cells", ViewList{View(day), View(std::to_string(n)), View(std::to_string(running))}}});
  }
  return OverviewChart("growth-chart", "Contacts over the last 30 days",
                       LineChartSvg("Contacts over the last 30 days: new each day and the total",
                                    labels, {total, fresh}),
                       "New contacts each day (UTC) and the total at the end of the day.",
                       ViewList{View("Day (UTC)"), View("New"), View("Total")}, std::move(rows));
}

}  // namespace

ViewList OverviewCharts(const json& dashboard, const json& report) {
  ViewList out;
  auto add = [&](std::optional<ViewMap> chart) {
    if (chart) out.emplace_back(std::move(*chart));
  };
  add(OverviewGrowthChart(report));
  const json contacts = dashboard.value("contacts", json::object());
  add(OverviewCountsChart("contacts-by-status", "Contacts by status",
                          contacts.value("by_status", json::object()), "Status"));
  add(OverviewCountsChart("contacts-by-type", "Contacts by type",
                          contacts.value("by_type", json::object()), "Type"));
  if (report.is_object())
    add(OverviewCountsChart("contacts-by-source", "New contacts of the last 30 days by source",
                            report.value("by_source", json::object()), "Source"));
  for (const char* key : {"campaigns", "automations"}) {
    const json part = dashboard.value(key, json::object());
    std::string name = key;
    name[0] = static_cast<char>(name[0] - 32);
    if (part.is_object())
      add(OverviewCountsChart(std::string(key) + "-by-status", name + " by status",
                              part.value("by_status", json::object()), "Status"));
  }
  return out;
}

}  // namespace crmd::console

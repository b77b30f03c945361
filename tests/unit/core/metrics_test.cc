// The metrics registry and its Prometheus text exposition (format 0.0.4).
#include "src/core/metrics.h"

#include <gtest/gtest.h>

#include <thread>

namespace crmd::metrics {
namespace {

TEST(Metrics, CounterAndGaugeRenderWithHelpTypeAndLabels) {
  Registry r;
  r.Counter("crmd_things_total", "Things.", {{"kind", "a"}}).Inc(2);
  r.Counter("crmd_things_total", "ignored", {{"kind", "b\"q\\"}}).Inc();
  r.Gauge("crmd_level", "Level.").Set(-3);
  EXPECT_EQ(r.Render(),
            "# HELP crmd_level Level.\n"
            "# TYPE crmd_level gauge\n"
            "crmd_level -3\n"
            "# HELP crmd_things_total Things.\n"
            "# TYPE crmd_things_total counter\n"
            "crmd_things_total{kind=\"a\"} 2\n"
            "crmd_things_total{kind=\"b\\\"q\\\\\"} 1\n");
}

TEST(Metrics, SameLabelsAreTheSameSeries) {
  Registry r;
  Counter& a = r.Counter("c_total", "C.", {{"x", "1"}, {"y", "2"}});
  Counter& b = r.Counter("c_total", "C.", {{"x", "1"}, {"y", "2"}});
  Counter& c = r.Counter("c_total", "C.", {{"x", "12"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
}

TEST(Metrics, HistogramBucketsAreCumulativeWithInfEqualToCount) {
  Registry r;
  constexpr double kBounds[] = {0.001, 0.01};
  Histogram& h = r.Histogram("lat_seconds", "Latency.", {{"f", "x"}}, kBounds);
  h.ObserveMicros(500);     // <= 0.001
  h.ObserveMicros(1000);    // == 0.001: in the bucket (le)
  h.ObserveMicros(5000);    // <= 0.01
  h.ObserveMicros(200000);  // +Inf only
  EXPECT_EQ(r.Render(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{f=\"x\",le=\"0.001\"} 2\n"
            "lat_seconds_bucket{f=\"x\",le=\"0.01\"} 3\n"
            "lat_seconds_bucket{f=\"x\",le=\"+Inf\"} 4\n"
            "lat_seconds_sum{f=\"x\"} 0.2065\n"
            "lat_seconds_count{f=\"x\"} 4\n");
}

TEST(Metrics, CollectorsRunBeforeRendering) {
  Registry r;
  int runs = 0;
  r.AddCollector([&] { r.Gauge("g", "G.").Set(++runs); });
  EXPECT_NE(r.Render().find("g 1\n"), std::string::npos);
  EXPECT_NE(r.Render().find("g 2\n"), std::string::npos);
}

TEST(Metrics, ConcurrentIncrementsAreAllCounted) {
  Registry r;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&r, t] {
      for (int i = 0; i < 10000; ++i)
        r.Counter("n_total", "N.", {{"t", t % 2 ? "odd" : "even"}}).Inc();
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(r.Counter("n_total", "N.", {{"t", "odd"}}).Value(), 20000u);
  EXPECT_EQ(r.Counter("n_total", "N.", {{"t", "even"}}).Value(), 20000u);
}

TEST(Metrics, ProcessRssIsReadFromProc) { EXPECT_GT(ProcessRssBytes(), 0); }

}  // namespace
}  // namespace crmd::metrics

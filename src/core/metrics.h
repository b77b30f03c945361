#pragma once
// Metrics in the Prometheus text exposition format (version 0.0.4), for GET /metrics.
//
// Recording is a relaxed atomic add on a series the caller holds (Counter, Gauge,
// Histogram): no lock and no allocation. Registry::Counter() / Gauge() / Histogram() find
// or create a series by name and label values under a shared lock; after the first call
// for a label set they allocate nothing either (the lookup key is built in a per-thread
// buffer), so faces with label values known only per request (a tool name, an error code)
// call them per request, and faces with fixed labels keep the reference. bench/
// metrics_bench.cc measures both against a no-op.
//
// Label values must come from a bounded set (route patterns, tool names, error codes,
// outcome words), never from request input: every distinct value is a series forever.
//
// Values that are cheaper to read when scraped than to maintain (queue depths, process
// memory) are set by collectors that Render() runs first.
//
// Thread-safe. Series live as long as the Registry; references to them stay valid.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace crmd::metrics {

class Counter {
 public:
  void Inc(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

class Gauge {
 public:
  void Set(int64_t v) { v_.store(v, std::memory_order_relaxed); }
  void Add(int64_t n) { v_.fetch_add(n, std::memory_order_relaxed); }
  int64_t Value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> v_{0};
};

// Upper bounds in seconds for request and transaction latency: 0.5 ms .. 10 s.
inline constexpr double kLatencyBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,  5,     10};

class Histogram {
 public:
  // REQUIRES: bounds ascending, at most kMaxBuckets.
  explicit Histogram(std::span<const double> bounds);
  void ObserveMicros(int64_t us);
  void ObserveSeconds(double s) { ObserveMicros(static_cast<int64_t>(s * 1e6)); }

  static constexpr size_t kMaxBuckets = 24;
  size_t bucket_count() const { return n_; }
  double bound(size_t i) const { return bounds_[i]; }
  uint64_t BucketValue(size_t i) const {
    return buckets_[i].load(std::memory_order_relaxed);
  }  // not cumulative
  uint64_t Count() const { return count_.load(std::memory_order_relaxed); }
  double SumSeconds() const { return sum_us_.load(std::memory_order_relaxed) / 1e6; }

 private:
  size_t n_ = 0;
  double bounds_[kMaxBuckets] = {};
  int64_t bounds_us_[kMaxBuckets] = {};
  std::atomic<uint64_t> buckets_[kMaxBuckets + 1] = {};  // the last one: +Inf
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_us_{0};
};

using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The series `name{labels}`, created on first use. `help` is kept from the first call.
  // REQUIRES: a name is always used with the same kind (and a histogram with the same bounds).
  metrics::Counter& Counter(std::string_view name, std::string_view help, Labels labels = {});
  metrics::Gauge& Gauge(std::string_view name, std::string_view help, Labels labels = {});
  metrics::Histogram& Histogram(std::string_view name, std::string_view help, Labels labels = {},
                                std::span<const double> bounds = kLatencyBuckets);

  // Run by Render() before it reads any series (e.g. to set queue-depth gauges).
  void AddCollector(std::function<void()> collector);

  // Every series, grouped by family and sorted by name: the body of GET /metrics
  // (Content-Type: text/plain; version=0.0.4).
  std::string Render() const;

 private:
  enum class Kind { kCounter, kGauge, kHistogram };
  struct Series {
    std::string labels;  // rendered: `a="x",b="y"` (no braces), empty without labels
    Kind kind;
    std::unique_ptr<metrics::Counter> counter;
    std::unique_ptr<metrics::Gauge> gauge;
    std::unique_ptr<metrics::Histogram> histogram;
  };
  struct Family {
    std::string help;
    Kind kind;
    std::vector<Series*> series;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  Series& Find(std::string_view name, std::string_view help, Labels labels, Kind kind,
               std::span<const double> bounds);

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<Series>, Hash, std::equal_to<>> index_;
  std::map<std::string, Family, std::less<>> families_;
  std::vector<std::function<void()>> collectors_;
  mutable std::mutex collect_mu_;  // one scrape's collectors at a time
};

// The series kept in `slot`, found by `find()` (a Registry lookup) on first use: for a
// hot path that would otherwise look it up by name and labels on every call (a key built
// and hashed, a shared lock taken). Races only store the same pointer twice. `find` returns
// a reference to a series, which lives as long as its Registry.
template <typename Series, typename Find>
Series& Kept(std::atomic<Series*>& slot, Find&& find) {
  Series* series = slot.load(std::memory_order_acquire);
  if (!series) {
    series = &find();
    slot.store(series, std::memory_order_release);
  }
  return *series;
}

// Escapes a label value for the exposition format (backslash, double quote, newline).
std::string EscapeLabelValue(std::string_view v);

// Resident set size of this process in bytes (/proc/self/statm), 0 when unknown.
int64_t ProcessRssBytes();

}  // namespace crmd::metrics

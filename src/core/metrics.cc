#include "src/core/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace crmd::metrics {
namespace {

// "12.5", "0.0005", "+Inf": the shortest text that reads back as the same double.
std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Prefer a short form when it round-trips.
  for (int precision = 1; precision < 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, v);
    if (std::strtod(shorter, nullptr) == v) return shorter;
  }
  return buf;
}

}  // namespace

Histogram::Histogram(std::span<const double> bounds) {
  n_ = std::min(bounds.size(), kMaxBuckets);
  for (size_t i = 0; i < n_; ++i) {
    bounds_[i] = bounds[i];
    bounds_us_[i] = static_cast<int64_t>(bounds[i] * 1e6);
  }
}

void Histogram::ObserveMicros(int64_t us) {
  if (us < 0) us = 0;
  size_t i = 0;
  while (i < n_ && us > bounds_us_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_us_.fetch_add(static_cast<uint64_t>(us), std::memory_order_relaxed);
}

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

Registry::Series& Registry::Find(std::string_view name, std::string_view help, Labels labels,
                                 Kind kind, std::span<const double> bounds) {
  // The key: name and label values separated by NUL, built without allocating once the
  // thread's buffer has grown to fit.
  thread_local std::string key;
  key.clear();
  key.append(name);
  for (const auto& [k, v] : labels) {
    key += '\0';
    key.append(k);
    key += '\0';
    key.append(v);
  }
  {
    std::shared_lock lock(mu_);
    auto it = index_.find(std::string_view(key));
    if (it != index_.end()) return *it->second;
  }
  std::unique_lock lock(mu_);
  auto it = index_.find(std::string_view(key));
  if (it != index_.end()) return *it->second;
  auto series = std::make_unique<Series>();
  for (const auto& [k, v] : labels) {
    if (!series->labels.empty()) series->labels += ',';
    series->labels.append(k);
    series->labels += "=\"";
    series->labels += EscapeLabelValue(v);
    series->labels += '"';
  }
  series->kind = kind;
  switch (kind) {
    case Kind::kCounter:
      series->counter = std::make_unique<metrics::Counter>();
      break;
    case Kind::kGauge:
      series->gauge = std::make_unique<metrics::Gauge>();
      break;
    case Kind::kHistogram:
      series->histogram = std::make_unique<metrics::Histogram>(bounds);
      break;
  }
  auto fam = families_.find(name);
  if (fam == families_.end())
    fam = families_
              .emplace(std::string(name),
                       Family{.help = std::string(help), .kind = kind, .series = {}})
              .first;
  Series& out = *series;
  fam->second.series.push_back(&out);
  index_.emplace(key, std::move(series));
  return out;
}

Counter& Registry::Counter(std::string_view name, std::string_view help, Labels labels) {
  return *Find(name, help, labels, Kind::kCounter, {}).counter;
}

Gauge& Registry::Gauge(std::string_view name, std::string_view help, Labels labels) {
  return *Find(name, help, labels, Kind::kGauge, {}).gauge;
}

Histogram& Registry::Histogram(std::string_view name, std::string_view help, Labels labels,
                               std::span<const double> bounds) {
  return *Find(name, help, labels, Kind::kHistogram, bounds).histogram;
}

void Registry::AddCollector(std::function<void()> collector) {
  std::lock_guard lock(collect_mu_);
  collectors_.push_back(std::move(collector));
}

std::string Registry::Render() const {
  {
    std::lock_guard lock(collect_mu_);
    for (const auto& c : collectors_) c();
  }
  std::shared_lock lock(mu_);
  std::string out;
  out.reserve(families_.size() * 256);
  auto braces = [](const std::string& labels, std::string_view extra = {}) {
    std::string s;
    if (labels.empty() && extra.empty()) return s;
    s += '{';
    s += labels;
    if (!labels.empty() && !extra.empty()) s += ',';
    s.append(extra);
    s += '}';
    return s;
  };
  for (const auto& [name, fam] : families_) {
    out += "# HELP " + name + " " + fam.help + "\n";
    out += "# TYPE " + name + " " +
           (fam.kind == Kind::kCounter ? "counter"
            : fam.kind == Kind::kGauge ? "gauge"
                                       : "histogram") +
           "\n";
    for (const Series* s : fam.series) {
      switch (s->kind) {
        case Kind::kCounter:
          out += name + braces(s->labels) + " " + std::to_string(s->counter->Value()) + "\n";
          break;
        case Kind::kGauge:
          out += name + braces(s->labels) + " " + std::to_string(s->gauge->Value()) + "\n";
          break;
        case Kind::kHistogram: {
          const auto& h = *s->histogram;
          uint64_t cumulative = 0;
          for (size_t i = 0; i < h.bucket_count(); ++i) {
            cumulative += h.BucketValue(i);
            out += name + "_bucket" + braces(s->labels, "le=\"" + FormatDouble(h.bound(i)) + "\"") +
                   " " + std::to_string(cumulative) + "\n";
          }
          cumulative += h.BucketValue(h.bucket_count());
          // Read count after the buckets and never let it fall below their sum: a scrape
          // racing an Observe stays consistent (+Inf bucket == _count).
          uint64_t count = std::max(cumulative, h.Count());
          out += name + "_bucket" + braces(s->labels, "le=\"+Inf\"") + " " + std::to_string(count) +
                 "\n";
          out += name + "_sum" + braces(s->labels) + " " + FormatDouble(h.SumSeconds()) + "\n";
          out += name + "_count" + braces(s->labels) + " " + std::to_string(count) + "\n";
          break;
        }
      }
    }
  }
  return out;
}

int64_t ProcessRssBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long size = 0, resident = 0;
  int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

}  // namespace crmd::metrics

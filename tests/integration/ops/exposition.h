#pragma once
// A small, strict reader of the Prometheus text exposition format (0.0.4) for the tests:
// every sample line must be `name{label="value",...} number`, every sample must belong to
// a family announced by `# TYPE` before it (a histogram's _bucket/_sum/_count included),
// and a histogram's buckets must be cumulative with +Inf equal to _count. A violation is a
// test failure naming the line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace crmd::opstest {

// Samples by their series as written: `name{a="x",b="y"}` (or `name`).
class Exposition {
 public:
  explicit Exposition(const std::string& text) { Parse(text); }

  // The sample's value; 0 when the series is absent (a counter not yet incremented).
  double operator[](const std::string& series) const {
    auto it = samples_.find(series);
    return it == samples_.end() ? 0 : it->second;
  }
  bool Has(const std::string& series) const { return samples_.count(series) > 0; }
  size_t size() const { return samples_.size(); }

 private:
  // gtest's ASSERT_* return from a void function, which a constructor is not.
  void Parse(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    std::map<std::string, std::string> types;  // family -> counter|gauge|histogram
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (line.rfind("# HELP ", 0) == 0) continue;
      if (line.rfind("# TYPE ", 0) == 0) {
        std::istringstream t(line.substr(7));
        std::string name, type;
        t >> name >> type;
        EXPECT_TRUE(type == "counter" || type == "gauge" || type == "histogram") << line;
        EXPECT_FALSE(types.count(name)) << "family announced twice: " << line;
        types[name] = type;
        continue;
      }
      ASSERT_NE(line[0], '#') << "unknown comment: " << line;
      size_t name_end = line.find_first_of("{ ");
      ASSERT_NE(name_end, std::string::npos) << line;
      std::string name = line.substr(0, name_end);
      for (char c : name)
        ASSERT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':') << line;
      size_t value_at = name_end;
      if (line[name_end] == '{') {
        // label="value" pairs; values may hold escaped quotes.
        size_t i = name_end + 1;
        while (line[i] != '}') {
          size_t eq = line.find('=', i);
          ASSERT_NE(eq, std::string::npos) << line;
          ASSERT_EQ(line[eq + 1], '"') << line;
          size_t j = eq + 2;
          while (j < line.size() && line[j] != '"') j += line[j] == '\\' ? 2 : 1;
          ASSERT_LT(j, line.size()) << "unterminated label value: " << line;
          i = j + 1;
          if (line[i] == ',') ++i;
          ASSERT_LT(i, line.size()) << line;
        }
        value_at = i + 1;
      }
      ASSERT_EQ(line[value_at], ' ') << line;
      std::string series = line.substr(0, value_at);
      std::string value = line.substr(value_at + 1);
      char* end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      ASSERT_TRUE(end && *end == '\0' && !value.empty()) << "not a number: " << line;
      std::string family = name;
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        std::string s(suffix);
        if (!types.count(family) && name.size() > s.size() &&
            name.compare(name.size() - s.size(), s.size(), s) == 0 &&
            types.count(name.substr(0, name.size() - s.size())) &&
            types[name.substr(0, name.size() - s.size())] == "histogram")
          family = name.substr(0, name.size() - s.size());
      }
      ASSERT_TRUE(types.count(family)) << "sample before its # TYPE: " << line;
      EXPECT_FALSE(samples_.count(series)) << "series twice: " << line;
      samples_[series] = v;
      if (types[family] == "histogram") CheckBucket(family, name, series, v);
    }
    for (const auto& [key, h] : histograms_) {
      EXPECT_TRUE(h.saw_inf) << key << " has no +Inf bucket";
      EXPECT_EQ(h.inf, h.count) << key << ": +Inf bucket differs from _count";
    }
  }

  struct Hist {
    double last = 0, inf = -1, count = -2;
    bool saw_inf = false;
  };
  void CheckBucket(const std::string& family, const std::string& name, const std::string& series,
                   double v) {
    // The series' labels without `le`, as the histogram's identity.
    std::string labels = series.substr(name.size());
    std::string id = labels;
    if (auto le = id.find("le=\""); le != std::string::npos) {
      auto close = id.find('"', le + 4);
      std::string bound = id.substr(le + 4, close - le - 4);
      id.erase(le, close - le + 1);
      Hist& h = histograms_[family + id];
      EXPECT_GE(v, h.last) << "buckets not cumulative: " << series;
      h.last = v;
      if (bound == "+Inf") {
        h.saw_inf = true;
        h.inf = v;
      }
    } else if (name == family + "_count") {
      // `{a="x"}` for the _count of the series whose buckets had `{a="x",}`.
      std::string key = labels.empty() ? "{}" : labels.substr(0, labels.size() - 1) + ",}";
      histograms_[family + key].count = v;
    }
  }

  std::map<std::string, double> samples_;
  std::map<std::string, Hist> histograms_;
};

}  // namespace crmd::opstest

#include "src/console/charts.h"

#include <algorithm>
#include <string_view>

#include "src/mail/message.h"

namespace crmd::console {

namespace {

constexpr int kSvgWidth = 640;
constexpr int kSvgLineHeight = 240;
constexpr int kSvgLeft = 56, kSvgRight = 12, kSvgTop = 12, kSvgBottom = 28;
constexpr int kSvgLegendRow = 20;
constexpr size_t kSvgMaxSeries = 5;

std::string SvgEsc(std::string_view s) { return mail::HtmlEscape(s); }

// At most `max` bytes of `s`, cut at a character boundary with "..." when cut.
std::string SvgShortened(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t end = max - 3;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end) + "...";
}

std::string SvgNum(int64_t v) { return std::to_string(v); }

// "1,234" reads better on an axis than "1234".
std::string SvgGrouped(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string SvgOpen(const std::string& title, const std::string& desc, int height) {
  return "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 " + SvgNum(kSvgWidth) + " " +
         SvgNum(height) + "\" xmlns=\"http://www.w3.org/2000/svg\"><title>" + SvgEsc(title) +
         "</title><desc>" + SvgEsc(desc) + "</desc>";
}

std::string SvgText(int x, int y, const std::string& text, std::string_view anchor = "start") {
  return "<text x=\"" + SvgNum(x) + "\" y=\"" + SvgNum(y) + "\" text-anchor=\"" +
         std::string(anchor) + "\">" + SvgEsc(text) + "</text>";
}

// The y axis: gridlines at 0, 1/4 ... the top, labelled.
std::string SvgYAxis(int64_t top, int plot_h) {
  std::string out = "<g class=\"axis\">";
  for (int i = 0; i <= 4; ++i) {
    int y = kSvgTop + plot_h - plot_h * i / 4;
    out += "<line x1=\"" + SvgNum(kSvgLeft) + "\" x2=\"" + SvgNum(kSvgWidth - kSvgRight) +
           "\" y1=\"" + SvgNum(y) + "\" y2=\"" + SvgNum(y) + "\"/>";
    out += SvgText(kSvgLeft - 6, y + 4, SvgGrouped(top * i / 4), "end");
  }
  return out + "</g>";
}

// The first, middle and last labels under the x axis.
std::string SvgXLabels(const std::vector<std::string>& labels, int plot_w, int y) {
  std::string out = "<g class=\"axis\">";
  const size_t n = labels.size();
  std::vector<size_t> shown = {0};
  if (n > 2) shown.push_back(n / 2);
  if (n > 1) shown.push_back(n - 1);
  for (size_t i : shown) {
    int x = kSvgLeft + (n == 1 ? plot_w / 2 : static_cast<int>(plot_w * i / (n - 1)));
    std::string_view anchor = i == 0 ? "start" : (i + 1 == n ? "end" : "middle");
    out += SvgText(x, y, labels[i], anchor);
  }
  return out + "</g>";
}

std::string SvgLine(const ChartSeries& s, size_t index, int64_t top, int plot_w, int plot_h) {
  const size_t n = s.values.size();
  std::string points, dots;
  for (size_t i = 0; i < n; ++i) {
    int x = kSvgLeft + (n == 1 ? plot_w / 2 : static_cast<int>(plot_w * i / (n - 1)));
    int y = kSvgTop + plot_h - static_cast<int>(plot_h * s.values[i] / top);
    points += (i ? " " : "") + SvgNum(x) + "," + SvgNum(y);
    if (n <= 48) dots += "<circle cx=\"" + SvgNum(x) + "\" cy=\"" + SvgNum(y) + "\" r=\"2.5\"/>";
  }
  return "<g class=\"series series-" + SvgNum(static_cast<int64_t>(index)) +
         "\"><polyline points=\"" + points + "\"/>" + dots + "</g>";
}

std::string SvgLegend(const std::vector<ChartSeries>& series, int y) {
  std::string out = "<g class=\"legend\">";
  int x = kSvgLeft;
  for (size_t i = 0; i < series.size() && i < kSvgMaxSeries; ++i) {
    out += "<g class=\"series series-" + SvgNum(static_cast<int64_t>(i)) + "\"><line x1=\"" +
           SvgNum(x) + "\" x2=\"" + SvgNum(x + 22) + "\" y1=\"" + SvgNum(y - 4) + "\" y2=\"" +
           SvgNum(y - 4) + "\"/></g>";
    out += SvgText(x + 28, y, series[i].name);
    x += 40 + static_cast<int>(series[i].name.size()) * 8;
  }
  return out + "</g>";
}

}  // namespace

int64_t NiceCeiling(int64_t v) {
  int64_t scale = 1;
  while (true) {
    for (int64_t m : {1, 2, 5})
      if (m * scale >= v) return m * scale;
    scale *= 10;
  }
}

std::string LineChartSvg(const std::string& title, const std::vector<std::string>& x_labels,
                         const std::vector<ChartSeries>& series) {
  if (x_labels.empty() || series.empty()) return "";
  int64_t max = 0;
  for (const auto& s : series)
    for (int64_t v : s.values) max = std::max(max, v);
  // Four gridlines at round numbers: a round step, four of them.
  const int64_t top = 4 * NiceCeiling((std::max<int64_t>(max, 1) + 3) / 4);
  const int plot_w = kSvgWidth - kSvgLeft - kSvgRight,
            plot_h = kSvgLineHeight - kSvgTop - kSvgBottom;
  std::string names;
  for (size_t i = 0; i < series.size() && i < kSvgMaxSeries; ++i)
    names += (i ? ", " : "") + series[i].name;
  std::string out = SvgOpen(title,
                            names + " from " + x_labels.front() + " to " + x_labels.back() +
                                "; the table below has every value.",
                            kSvgLineHeight + kSvgLegendRow);
  out += SvgYAxis(top, plot_h) + SvgXLabels(x_labels, plot_w, kSvgLineHeight - 8);
  for (size_t i = 0; i < series.size() && i < kSvgMaxSeries; ++i)
    if (series[i].values.size() == x_labels.size())
      out += SvgLine(series[i], i, top, plot_w, plot_h);
  return out + SvgLegend(series, kSvgLineHeight + kSvgLegendRow - 4) + "</svg>";
}

std::string BarChartSvg(const std::string& title, const std::vector<ChartBar>& bars) {
  if (bars.empty()) return "";
  constexpr int kRow = 40, kBarH = 14, kPad = 8, kValueRoom = 72;
  int64_t max = 1;
  for (const auto& b : bars) max = std::max(max, b.value);
  const int height = static_cast<int>(bars.size()) * kRow + kPad;
  std::string out = SvgOpen(
      title, std::to_string(bars.size()) + " bars; the table below has every value.", height);
  const int bar_w = kSvgWidth - kPad * 2 - kValueRoom;
  for (size_t i = 0; i < bars.size(); ++i) {
    const int y = kPad + static_cast<int>(i) * kRow;
    const std::string label = SvgShortened(bars[i].label, 80);
    const int w = std::max(1, static_cast<int>(bar_w * bars[i].value / max));
    out += "<g class=\"bar\">" + SvgText(kPad, y + 12, label) + "<rect x=\"" + SvgNum(kPad) +
           "\" y=\"" + SvgNum(y + 18) + "\" width=\"" + SvgNum(w) + "\" height=\"" + SvgNum(kBarH) +
           "\"/>" + SvgText(kPad + w + 6, y + 30, SvgGrouped(bars[i].value)) + "</g>";
  }
  return out + "</svg>";
}

}  // namespace crmd::console

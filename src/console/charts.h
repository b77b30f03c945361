#pragma once
// Charts as server-rendered SVG, drawn here from numbers (no chart library, no script):
// the campaign report and the Overview put them in their pages as they are. Every chart
// is an <svg role="img"> with a <title> and a <desc> naming what it shows; the same
// numbers stand in a table beside it for screen readers and for reading exact values.
// Colours and dashes come from console.css (classes series-0 ... series-4), so the CSP
// needs no inline style. Pure functions; thread-safe.
#include <cstdint>
#include <string>
#include <vector>

namespace crmd::console {

struct ChartSeries {
  std::string name;
  std::vector<int64_t> values;  // one per x label
};

// Lines over x (e.g. hours), one per series (at most 5 distinguished by colour and dash),
// with a y axis from 0 to a round maximum, the first, middle and last x labels, and a
// legend. "" when there are no x values.
std::string LineChartSvg(const std::string& title, const std::vector<std::string>& x_labels,
                         const std::vector<ChartSeries>& series);

struct ChartBar {
  std::string label;
  int64_t value = 0;
};

// Horizontal bars, one per row with its label above it and its value at its end. "" when
// there are no bars.
std::string BarChartSvg(const std::string& title, const std::vector<ChartBar>& bars);

// A round number at or above `v` (1, 2, 5 times a power of ten), at least 1.
int64_t NiceCeiling(int64_t v);

}  // namespace crmd::console

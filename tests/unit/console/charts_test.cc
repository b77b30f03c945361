// The console's server-rendered SVG charts (src/console/charts.h): round axes, escaped
// labels, nothing drawn without data, no inline style or script.
#include "src/console/charts.h"

#include <gtest/gtest.h>

#include <string>

namespace crmd::console {
namespace {

TEST(ConsoleCharts, NiceCeilingIsOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_EQ(NiceCeiling(0), 1);
  EXPECT_EQ(NiceCeiling(1), 1);
  EXPECT_EQ(NiceCeiling(3), 5);
  EXPECT_EQ(NiceCeiling(7), 10);
  EXPECT_EQ(NiceCeiling(11), 20);
  EXPECT_EQ(NiceCeiling(499), 500);
  EXPECT_EQ(NiceCeiling(1001), 2000);
}

TEST(ConsoleCharts, ALineChartHasItsTitleRoundGridlinesAndEscapedLabels) {
  std::string svg = LineChartSvg(
      "Sent <all>", {"a<b", "c", "d&e"},
      {{.name = "Sent", .values = {0, 3, 6}}, {.name = "Opened \"x\"", .values = {0, 1, 2}}});
  EXPECT_EQ(svg.rfind("<svg class=\"chart\" role=\"img\"", 0), 0u) << svg;
  EXPECT_NE(svg.find("<title>Sent &lt;all&gt;</title>"), std::string::npos);
  EXPECT_NE(svg.find(">a&lt;b</text>"), std::string::npos);
  EXPECT_NE(svg.find(">d&amp;e</text>"), std::string::npos);
  EXPECT_NE(svg.find("Opened &quot;x&quot;"), std::string::npos);
  // Six at most: gridlines 0, 2, 4, 6, 8 (four steps of a round 2).
  for (const char* tick : {">0</text>", ">2</text>", ">4</text>", ">6</text>", ">8</text>"})
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_NE(svg.find("class=\"series series-1\""), std::string::npos);
  EXPECT_EQ(svg.find("style="), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(LineChartSvg("Nothing", {}, {{.name = "Sent"}}), "");
}

TEST(ConsoleCharts, ABarChartHasABarPerRowWithItsValue) {
  std::string svg = BarChartSvg("Clicks", {{.label = "https://example.com/<a>", .value = 1234},
                                           {.label = std::string(200, 'x'), .value = 1}});
  EXPECT_NE(svg.find(">https://example.com/&lt;a&gt;</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1,234</text>"), std::string::npos);
  EXPECT_NE(svg.find(std::string(77, 'x') + "...</text>"), std::string::npos);
  EXPECT_EQ(BarChartSvg("Clicks", {}), "");
}

}  // namespace
}  // namespace crmd::console

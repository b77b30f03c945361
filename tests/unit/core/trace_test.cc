// W3C Trace Context parsing (https://www.w3.org/TR/trace-context/ §3.2, §3.3).
#include "src/core/trace.h"

#include <gtest/gtest.h>

#include "src/core/log.h"

namespace crmd::trace {
namespace {

constexpr const char* kValid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

TEST(Traceparent, ParsesVersion00_3_2) {
  auto p = ParseTraceparent(kValid);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->trace_id, "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(p->parent_id, "b7ad6b7169203331");
  EXPECT_EQ(p->flags, 1);
  EXPECT_EQ(ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")->flags, 0);
}

TEST(Traceparent, RejectsAllZeroIds_3_2_2_3_and_3_2_2_4) {
  EXPECT_FALSE(ParseTraceparent("00-00000000000000000000000000000000-b7ad6b7169203331-01"));
  EXPECT_FALSE(ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"));
}

TEST(Traceparent, RejectsUpperCaseAndNonHex_3_2_2) {
  EXPECT_FALSE(ParseTraceparent("00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"));
  EXPECT_FALSE(ParseTraceparent("00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01"));
  EXPECT_FALSE(ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0x"));
}

TEST(Traceparent, RejectsVersionFfAndBadShapes_3_2_2_1) {
  EXPECT_FALSE(ParseTraceparent("ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
  EXPECT_FALSE(ParseTraceparent(""));
  EXPECT_FALSE(ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331"));
  // Version 00 is exactly 55 characters.
  EXPECT_FALSE(ParseTraceparent(std::string(kValid) + "-extra"));
  EXPECT_FALSE(ParseTraceparent("00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
  EXPECT_FALSE(ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-101"));
}

TEST(Traceparent, HigherVersionParsesItsVersion00Fields_3_2_4) {
  auto p = ParseTraceparent(
      "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-the-future-holds");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->trace_id, "0af7651916cd43dd8448eb211c80319c");
  EXPECT_FALSE(ParseTraceparent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x"));
}

TEST(Tracestate, PassedOnWhenPlausible_3_3) {
  EXPECT_TRUE(ValidTracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
  EXPECT_FALSE(ValidTracestate(""));
  EXPECT_FALSE(ValidTracestate(std::string(513, 'a')));
  EXPECT_FALSE(ValidTracestate("a=1\nb=2"));
  std::string many;
  for (int i = 0; i < 33; ++i) many += (i ? "," : "") + std::string("k") + std::to_string(i) + "=v";
  EXPECT_FALSE(ValidTracestate(many));
}

TEST(TraceContext, ContinuesTheCallersTraceWithANewSpan) {
  Context c = Continue(std::string_view(kValid), std::string_view("rojo=1"));
  EXPECT_EQ(c.trace_id, "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(c.parent_id, "b7ad6b7169203331");
  EXPECT_EQ(c.span_id.size(), 16u);
  EXPECT_NE(c.span_id, c.parent_id);
  EXPECT_EQ(c.tracestate, "rojo=1");
  EXPECT_EQ(c.Traceparent(), "00-0af7651916cd43dd8448eb211c80319c-" + c.span_id + "-01");
  Context child = c.Child();
  EXPECT_EQ(child.trace_id, c.trace_id);
  EXPECT_EQ(child.parent_id, c.span_id);
  EXPECT_NE(child.span_id, c.span_id);
  EXPECT_TRUE(ParseTraceparent(child.Traceparent()).has_value());
}

TEST(TraceContext, InvalidOrMissingParentStartsANewTraceAndDropsTracestate_3_3_1_1) {
  Context c = Continue(std::string_view("garbage"), std::string_view("rojo=1"));
  EXPECT_EQ(c.trace_id.size(), 32u);
  EXPECT_TRUE(c.parent_id.empty());
  EXPECT_TRUE(c.tracestate.empty());
  EXPECT_TRUE(ParseTraceparent(c.Traceparent()).has_value());
  Context d = Continue(std::nullopt, std::nullopt);
  EXPECT_NE(d.trace_id, c.trace_id);
}

TEST(LogScope, NestsAndRestores) {
  EXPECT_EQ(CurrentLogContext(), nullptr);
  {
    LogScope outer(LogContext{.request_id = "r1", .trace = Start()});
    ASSERT_NE(CurrentLogContext(), nullptr);
    EXPECT_EQ(CurrentLogContext()->request_id, "r1");
    {
      LogScope inner(LogContext{.request_id = "r2"});
      EXPECT_EQ(CurrentLogContext()->request_id, "r2");
    }
    EXPECT_EQ(CurrentLogContext()->request_id, "r1");
  }
  EXPECT_EQ(CurrentLogContext(), nullptr);
}

}  // namespace
}  // namespace crmd::trace

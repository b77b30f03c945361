#include "src/core/header_text.h"

#include <gtest/gtest.h>

namespace crmd {
namespace {

TEST(HeaderText, AcceptsPrintableTextInAnyScript) {
  for (const char* ok : {"", "Acme", "Café Ünïcode \"Team\" <news>", "日本の店", "O'Brien & Sons"})
    EXPECT_EQ(HeaderTextProblem(ok), "") << ok;
}

TEST(HeaderText, RefusesLineBreaksControlsAndBrokenUtf8_Rfc5322_2_2) {
  EXPECT_EQ(HeaderTextProblem("Shop\r\nBcc: x@evil.example"), "must not contain line breaks");
  EXPECT_EQ(HeaderTextProblem("Shop\nTeam"), "must not contain line breaks");
  EXPECT_EQ(HeaderTextProblem("Shop\rTeam"), "must not contain line breaks");
  EXPECT_EQ(HeaderTextProblem(std::string("Shop\0Team", 9)), "must not contain control characters");
  EXPECT_EQ(HeaderTextProblem("Shop\tTeam"), "must not contain control characters");
  EXPECT_EQ(HeaderTextProblem("Shop\x7f"), "must not contain control characters");
  EXPECT_EQ(HeaderTextProblem("Shop \xc2\x85"), "must not contain control characters");  // NEL
  EXPECT_EQ(HeaderTextProblem("Shop \xc2\xa0 Team"), "");  // no-break space is text
  EXPECT_EQ(HeaderTextProblem("Shop \xff"), "is not valid UTF-8");
  EXPECT_EQ(HeaderTextProblem("Shop \xe2\x82"), "is not valid UTF-8");  // truncated
}

}  // namespace
}  // namespace crmd

#include "src/core/json_parse.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

namespace crmd {
namespace {

using json = nlohmann::json;

std::string Nested(int levels, const std::string& open, const std::string& close) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += open;
  for (int i = 0; i < levels; ++i) s += close;
  return s;
}

TEST(JsonStrict, AcceptsWhatTheDomParserBuildsAndTheSameValue) {
  for (
      const char* text :
      {R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_contact","arguments":{"email":"a@example.com"}}})",
       R"([1,-2,3.5,1e3,18446744073709551615,-9223372036854775808,true,false,null,"\u00e9\ud83d\ude00",[],{}])",
       R"(  {"a":[{"b":[[{"c":null}]]}],"":"empty name","z":{"y":{"x":[1,[2,[3]]]}}}  )", "0",
       "\"s\"", "null", "[[],[[]],{}]"}) {
    auto parsed = ParseJsonStrict(text);
    ASSERT_TRUE(parsed) << text << ": " << parsed.detail;
    EXPECT_EQ(parsed.value, json::parse(text)) << text;
    EXPECT_EQ(parsed.value.dump(), json::parse(text).dump()) << text;  // same types too
  }
}

TEST(JsonStrict, RandomDocumentsParseToWhatTheyWereMadeFrom) {
  std::mt19937 rng(20261126);
  std::function<json(int)> make = [&](int depth) -> json {
    switch (depth > 4 ? rng() % 4 : rng() % 6) {
      case 0:
        return nullptr;
      case 1:
        return static_cast<int64_t>(rng()) - (1ll << 31);
      case 2:
        return std::string(rng() % 5, static_cast<char>('a' + rng() % 26));
      case 3:
        return (rng() % 2) == 0;
      case 4: {
        json a = json::array();
        for (unsigned i = rng() % 4; i > 0; --i) a.push_back(make(depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (unsigned i = rng() % 4; i > 0; --i)
          o["k" + std::to_string(rng() % 10)] = make(depth + 1);
        return o;
      }
    }
  };
  for (int i = 0; i < 500; ++i) {
    const json doc = make(0);
    auto parsed = ParseJsonStrict(doc.dump());
    ASSERT_TRUE(parsed) << doc.dump();
    EXPECT_EQ(parsed.value, doc);
  }
}

TEST(JsonStrict, DuplicateMembersAreRefusedAtAnyDepthButNotAcrossObjects) {
  auto top = ParseJsonStrict(R"({"email":"a@example.com","email":"b@example.com"})");
  EXPECT_EQ(top.problem, JsonProblem::kDuplicateKey);
  EXPECT_EQ(top.detail, "member \"email\" appears twice in one object");
  EXPECT_TRUE(top.value.is_null());
  auto deep = ParseJsonStrict(R"({"a":[1,{"b":{"c":1,"d":2,"c":3}}]})");
  EXPECT_EQ(deep.problem, JsonProblem::kDuplicateKey);
  EXPECT_EQ(deep.detail, "member \"c\" appears twice in one object");
  // The same name in sibling and nested objects is fine.
  auto siblings = ParseJsonStrict(R"({"a":{"x":1},"b":{"x":2},"x":[{"x":3},{"x":4}]})");
  ASSERT_TRUE(siblings) << siblings.detail;
  EXPECT_EQ(siblings.value["x"][1]["x"], 4);
  // The first problem wins: a duplicate before a syntax error, a syntax error before one.
  EXPECT_EQ(ParseJsonStrict(R"({"a":1,"a":2,)").problem, JsonProblem::kDuplicateKey);
  EXPECT_EQ(ParseJsonStrict(R"({"a":1 "a":2})").problem, JsonProblem::kSyntax);
}

TEST(JsonStrict, SixtyFourLevelsAreAcceptedAndSixtyFiveRefused) {
  // n levels of objects: n - 1 members wrapped around an empty object.
  auto objects = [](int n) { return Nested(n - 1, "{\"a\":", "}").insert((n - 1) * 5, "{}"); };
  EXPECT_TRUE(ParseJsonStrict(Nested(kMaxJsonDepth, "[", "]")));
  EXPECT_TRUE(ParseJsonStrict(objects(kMaxJsonDepth))) << objects(kMaxJsonDepth);
  for (const std::string& deep :
       {Nested(kMaxJsonDepth + 1, "[", "]"), objects(kMaxJsonDepth + 1)}) {
    auto refused = ParseJsonStrict(deep);
    EXPECT_EQ(refused.problem, JsonProblem::kTooDeep) << deep;
    EXPECT_EQ(refused.detail, "the document is nested deeper than 64 levels");
  }
  EXPECT_EQ(ParseJsonStrict("[[[1]]]", 2).problem, JsonProblem::kTooDeep);
  EXPECT_TRUE(ParseJsonStrict("[[1]]", 2));
  // 100,000 levels: refused at 65, no deep recursion anywhere.
  EXPECT_EQ(ParseJsonStrict(std::string(100000, '[')).problem, JsonProblem::kTooDeep);
  // A caller asking for more than 1,000 levels gets 1,000: the parser recurses per level.
  EXPECT_TRUE(ParseJsonStrict(Nested(1000, "[", "]"), 1 << 30));
  auto capped = ParseJsonStrict(Nested(1001, "[", "]"), 1 << 30);
  EXPECT_EQ(capped.problem, JsonProblem::kTooDeep);
  EXPECT_EQ(capped.detail, "the document is nested deeper than 1000 levels");
}

// The parser is crmd's own (src/core/json_parse.cc); what it accepts and builds must be
// what nlohmann's parser does, down to the number types (tests/fuzz/json_strict_fuzz.cc
// checks the same on generated input).
void ExpectSameTypes(const json& a, const json& b, const std::string& text) {
  ASSERT_EQ(a.type(), b.type()) << text << ": " << a.dump() << " vs " << b.dump();
  if (a.is_structured()) {
    ASSERT_EQ(a.size(), b.size()) << text;
    if (a.is_array()) {
      for (size_t i = 0; i < a.size(); ++i) ExpectSameTypes(a[i], b[i], text);
    } else {
      for (auto it = a.begin(); it != a.end(); ++it) ExpectSameTypes(*it, b.at(it.key()), text);
    }
  }
}

TEST(JsonStrict, NumbersStringsAndEscapesAreReadAsNlohmannReadsThem) {
  for (const std::string& text :
       std::vector<std::string>{"0",
                                "-0",
                                "-0.0",
                                "1.5e-3",
                                "1E5",
                                "2e+2",
                                "9223372036854775807",
                                "9223372036854775808",
                                "-9223372036854775808",
                                "-9223372036854775809",
                                "18446744073709551615",
                                "18446744073709551616",
                                "123456789012345678901234567890",
                                "1e-400",
                                "4.9e-324",
                                "1.7976931348623157e308",
                                "[0,1,-1,0.5,-0.5]",
                                R"("\"\\\/\b\f\n\r\t")",
                                R"("\u0001x")",
                                R"("\u00e9\u20AC\uD83D\uDE00")",
                                "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf \x7f\"",
                                "\xef\xbb\xbf{\"bom\":true}",
                                " \t\r\n[ 1 , { \"a\" : [ ] } ] \n",
                                R"({"":{"":[""]}})"}) {
    auto parsed = ParseJsonStrict(text);
    ASSERT_TRUE(parsed) << text << ": " << parsed.detail;
    const json dom = json::parse(text);
    EXPECT_EQ(parsed.value, dom) << text;
    ExpectSameTypes(parsed.value, dom, text);
  }
}

TEST(JsonStrict, AStringWithNulIsRefusedWhereverItIs) {
  // Valid JSON that nlohmann reads, but PostgreSQL's text cannot hold U+0000.
  for (const std::string& text :
       std::vector<std::string>{R"("\u0000")", R"({"name":"a\u0000b"})", R"({"a\u0000":1})",
                                R"([1,{"x":["ok","\u0000"]}])"}) {
    EXPECT_FALSE(json::parse(text, nullptr, false).is_discarded()) << text;
    auto parsed = ParseJsonStrict(text);
    EXPECT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.problem, JsonProblem::kNulCharacter) << text;
    EXPECT_EQ(parsed.detail, "a string contains \\u0000 (NUL), which is not accepted");
  }
  EXPECT_TRUE(ParseJsonStrict(R"("\u0001\u0030")"));  // other escapes below U+0020 are kept
}

TEST(JsonStrict, MalformedNumbersStringsAndUtf8AreSyntaxProblems) {
  for (const std::string& text : std::vector<std::string>{"-",
                                                          "+1",
                                                          "01",
                                                          "1.",
                                                          ".5",
                                                          "1e",
                                                          "1e+",
                                                          "-a",
                                                          "1.e3",
                                                          "0x10",
                                                          "Infinity",
                                                          "tru",
                                                          "nul",
                                                          "falsey",
                                                          R"("\x")",
                                                          R"("\u12")",
                                                          R"("\u12G4")",
                                                          R"("\udc00")",
                                                          R"("\ud800\u0041")",
                                                          R"("\ud800x")",
                                                          "\"\xc0\xaf\"",
                                                          "\"\xc1\xbf\"",
                                                          "\"\xe0\x80\x80\"",
                                                          "\"\xed\xa0\x80\"",
                                                          "\"\xf0\x80\x80\x80\"",
                                                          "\"\xf4\x90\x80\x80\"",
                                                          "\"\xf5\x80\x80\x80\"",
                                                          "\"\xc3\"",
                                                          "\"\xe2\x82\"",
                                                          "\"\x80\"",
                                                          "\"a\tb\"",
                                                          "\"a\nb\"",
                                                          "\xef\xbb{}",
                                                          "\xef{}",
                                                          "{\"a\" 1}",
                                                          "{,}",
                                                          "[,1]",
                                                          "{\"a\":1,}",
                                                          "{1:2}",
                                                          "[1 2]",
                                                          "\"unterminated"}) {
    auto parsed = ParseJsonStrict(text);
    EXPECT_EQ(parsed.problem, JsonProblem::kSyntax) << text;
    EXPECT_TRUE(json::parse(text, nullptr, false).is_discarded()) << text;
  }
}

TEST(JsonStrict, WhatIsNotJsonIsASyntaxProblem) {
  for (const std::string& text : std::vector<std::string>{
           "", " ", "{", "{\"a\":}", "[1,]", "{\"a\":1}x", "{\"a\":1} {}", "'a'", "{a:1}",
           "[1e400]", "[NaN]", "\"\xff\"", "\"\\ud800\"", "/* c */ {}",
           // A NUL byte ended nlohmann's input: not here.
           std::string("{\"a\":1}\0", 8), std::string("{\"a\":1}\0junk", 12),
           std::string("{\"a\":\"x\0\"}", 10)}) {
    auto parsed = ParseJsonStrict(text);
    EXPECT_EQ(parsed.problem, JsonProblem::kSyntax) << text;
    EXPECT_EQ(parsed.detail, "the body is not valid JSON");
    EXPECT_FALSE(parsed);
  }
}

}  // namespace
}  // namespace crmd

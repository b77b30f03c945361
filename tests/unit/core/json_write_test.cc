#include "src/core/json_write.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace crmd {
namespace {

using nlohmann::json;
using EH = json::error_handler_t;

// DumpJson must write exactly what nlohmann's dump() writes, with either handler.
void ExpectSameAsDump(const json& v) {
  for (EH eh : {EH::strict, EH::replace, EH::ignore}) {
    std::string ours, theirs;
    bool ours_threw = false, theirs_threw = false;
    try {
      ours = DumpJson(v, eh);
    } catch (const json::type_error&) {
      ours_threw = true;
    }
    try {
      theirs = v.dump(-1, ' ', false, eh);
    } catch (const json::type_error&) {
      theirs_threw = true;
    }
    ASSERT_EQ(ours_threw, theirs_threw) << theirs;
    ASSERT_EQ(ours, theirs);
  }
}

TEST(DumpJson, WritesWhatNlohmannWritesForEveryKindOfValue) {
  ExpectSameAsDump(nullptr);
  ExpectSameAsDump(true);
  ExpectSameAsDump(false);
  ExpectSameAsDump(0);
  ExpectSameAsDump(-9223372036854775807LL - 1);
  ExpectSameAsDump(18446744073709551615ULL);
  ExpectSameAsDump(3.25);
  ExpectSameAsDump(1e300);
  ExpectSameAsDump(-0.0);
  ExpectSameAsDump(json::array());
  ExpectSameAsDump(json::object());
  ExpectSameAsDump(json::parse(R"({"b":[1,2,{"c":null}],"a":"x","é":{"z":[],"y":{}}})"));
  ExpectSameAsDump(json{
      {"content",
       json::array({{{"type", "text"}, {"text", R"({"contact":{"email":"a@example.com"}})"}}})},
      {"isError", false}});
}

// A tool result's answer: its structured content is written from the text block, which is
// that content's DumpJson. The bytes are those of serialising the whole tree.
TEST(DumpJson, AKnownNodeIsWrittenFromItsTextAndTheBytesAreUnchanged) {
  json structured =
      json::parse(R"({"contact":{"email":"a@example.com","name":"Grüße \"x\"","tags":[1,2]}})");
  const std::string text = DumpJson(structured);
  json doc{{"jsonrpc", "2.0"},
           {"id", 7},
           {"result",
            {{"content", json::array({{{"type", "text"}, {"text", text}}})},
             {"isError", false},
             {"structuredContent", structured}}}};
  const json& node = doc["result"]["structuredContent"];
  for (EH eh : {EH::strict, EH::replace}) {
    EXPECT_EQ(DumpJson(doc, eh, JsonSerialized{.node = &node, .text = text}),
              doc.dump(-1, ' ', false, eh));
  }
  // The text really is what is written there: the tree is not walked.
  std::string written =
      DumpJson(doc, EH::strict, JsonSerialized{.node = &node, .text = "{\"sentinel\":1}"});
  EXPECT_NE(written.find(R"("structuredContent":{"sentinel":1})"), std::string::npos) << written;
  // A node elsewhere (not in the document) changes nothing.
  json other = structured;
  EXPECT_EQ(DumpJson(doc, EH::strict, JsonSerialized{.node = &other, .text = "x"}), doc.dump());
  // Invalid UTF-8 elsewhere in the document: nlohmann's dump decides, as without a node.
  doc["id"] = std::string("\xff");
  EXPECT_EQ(DumpJson(doc, EH::replace,
                     JsonSerialized{.node = &doc["result"]["structuredContent"], .text = text}),
            doc.dump(-1, ' ', false, EH::replace));
}

TEST(DumpJson, EscapesStringsAsNlohmannDoes) {
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls.push_back(static_cast<char>(c));
  ExpectSameAsDump(controls);
  ExpectSameAsDump("quote \" backslash \\ slash / del \x7f tab \t");
  ExpectSameAsDump("Grüße, 東京, 😀, \xE2\x80\xA8");
  ExpectSameAsDump(json{{"key \"with\"\nescapes", "v"}});
}

TEST(DumpJson, InvalidUtf8BehavesAsNlohmann) {
  for (const char* bad : {"\xC0\xAF", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF5",
                          "\x80", "abc\xC3", "\xE2\x82", "ok \xFF ok"}) {
    ExpectSameAsDump(std::string(bad));
    ExpectSameAsDump(json{{"k", bad}});
    ExpectSameAsDump(json{{bad, 1}});
  }
  EXPECT_THROW(DumpJson(std::string("\xFF")), json::type_error);
}

TEST(DumpJson, RandomStringsMatchNlohmann) {
  std::mt19937 rng(12345);
  // Bytes drawn mostly from the interesting ranges: ASCII, controls, lead and
  // continuation bytes; most strings are invalid UTF-8, many are valid.
  const std::string pool = std::string("aZ09 \"\\/\x01\x1f\x7f") +
                           "\xC2\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\x80\xBF\xC0\xED\xA0\xF4\x90\xFF";
  int valid = 0;
  for (int n = 0; n < 3000; ++n) {
    std::string s;
    size_t len = rng() % 24;
    for (size_t i = 0; i < len; ++i) s.push_back(pool[rng() % pool.size()]);
    try {
      (void)json(s).dump();
      ++valid;
    } catch (const json::type_error&) {
    }
    ExpectSameAsDump(s);
    ExpectSameAsDump(json{{"s", s}, {"a", json::array({s, 1})}});
  }
  EXPECT_GT(valid, 100);  // the draw does reach valid non-trivial strings
}

TEST(DumpJson, EverySpecialByteIsFoundAtEveryPlaceOfAnEightByteWord) {
  // The writer skips eight plain bytes at a time: a byte that needs escaping (or starts a
  // UTF-8 sequence) must be seen wherever it falls, also next to another one.
  const std::vector<std::string> specials = {
      "\"",   "\\",       "\n",           std::string(1, '\0'), "\x1f",
      "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",   "\xff"};
  int compared = 0;
  for (size_t len = 0; len <= 24; ++len) {
    for (size_t at = 0; at <= len; ++at) {
      for (const auto& a : specials) {
        for (const auto& b : {std::string(), std::string("\x01"), std::string("\"")}) {
          std::string text(len, 'x');
          text.insert(at, a + b);
          const json v = text;
          for (EH eh : {EH::strict, EH::replace, EH::ignore}) {
            std::string ours, theirs;
            try {
              theirs = v.dump(-1, ' ', false, eh);
            } catch (const json::exception&) {
              theirs = "<throws>";
            }
            try {
              ours = DumpJson(v, eh);
            } catch (const json::exception&) {
              ours = "<throws>";
            }
            ASSERT_EQ(ours, theirs) << "length " << len << ", at " << at;
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 10000);
}

TEST(AppendJson, PiecesWriteWhatDumpJsonWritesUnderReplace) {
  const std::vector<std::string> strings = {"",
                                            "plain",
                                            "quote \" and \\ backslash",
                                            "tab\tnewline\ncontrol\x01\x1f",
                                            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                                            "bad \xff byte",
                                            "cut \xe2\x82",
                                            "surrogate \xed\xa0\x80",
                                            std::string("nul\0inside", 10)};
  for (const auto& s : strings) {
    std::string out = "[";
    AppendJsonString(out, s);
    EXPECT_EQ(out, "[" + DumpJson(json(s), json::error_handler_t::replace)) << s;
  }
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{42}, INT64_MAX, INT64_MIN}) {
    std::string out;
    AppendJsonInt(out, v);
    EXPECT_EQ(out, json(v).dump());
  }
  json doc = {{"a", {1, 2.5, nullptr, true}}, {"b", {{"c", "bad \xff"}}}, {"d", json::object()}};
  std::string out = "x";
  AppendJson(out, doc);
  EXPECT_EQ(out, "x" + doc.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace
}  // namespace crmd

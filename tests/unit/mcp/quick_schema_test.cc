// The quick schema checker (src/mcp/quick_schema.h) against valijson, on the real input
// schemas of the 48 tools: where it answers, it answers as valijson does, and it does
// answer for the common calls (else it would be no faster).
#include "src/mcp/quick_schema.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "src/core/embedded.h"
#include "src/mcp/json_schema.h"

namespace crmd::mcp {
namespace {

using json = nlohmann::json;

struct Tool {
  std::string name;
  json schema;
  std::unique_ptr<CompiledSchema> compiled;
};

std::vector<Tool> Tools() {
  std::vector<Tool> out;
  for (const auto& f : embedded::All()) {
    if (f.path.rfind("tools/", 0) != 0 || f.path.substr(f.path.size() - 5) != ".json") continue;
    auto descriptor = json::parse(f.data, nullptr, false);
    if (!descriptor.is_object() || !descriptor.contains("inputSchema")) continue;
    auto compiled = CompiledSchema::Compile(descriptor["inputSchema"]);
    if (!compiled) continue;
    out.push_back(
        {descriptor["name"].get<std::string>(), descriptor["inputSchema"], std::move(*compiled)});
  }
  return out;
}

// Where the quick checker answers, valijson agrees; returns the verdict.
QuickVerdict Agreeing(const Tool& tool, const json& doc) {
  const QuickVerdict quick = tool.compiled->QuickCheck(doc);
  if (quick != QuickVerdict::kUnsure) {
    const bool valijson_valid = !tool.compiled->ValidateWithValijson(doc).has_value();
    EXPECT_EQ(quick == QuickVerdict::kValid, valijson_valid) << tool.name << ": " << doc.dump();
  }
  return quick;
}

// Documents shaped by a schema, now and then a little off (a wrong type, a bound missed, a
// stray member, a required one left out), so that both verdicts come up.
class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  json Make(const json& schema, int depth = 0) {
    if (depth > 6 || !schema.is_object()) return Scalar();
    if (Chance(8)) return Scalar();
    if (schema.contains("enum")) {
      const auto& e = schema["enum"];
      return Chance(6) ? json("not-in-enum") : e[rng_() % e.size()];
    }
    std::string type = "object";
    if (schema.contains("type")) {
      const auto& t = schema["type"];
      type = t.is_array() ? t[rng_() % t.size()].get<std::string>() : t.get<std::string>();
    } else if (schema.contains("oneOf")) {
      type = "object";
    }
    if (type == "string") {
      size_t lo = schema.value("minLength", 0), hi = schema.value("maxLength", lo + 12);
      size_t n = Chance(6) ? (Chance(2) ? hi + 1 : (lo > 0 ? lo - 1 : 0))
                           : lo + rng_() % (std::min<size_t>(hi, lo + 20) - lo + 1);
      std::string s;
      for (size_t i = 0; i < n; ++i)
        s += Chance(5) ? "\xc3\xa9" : std::string(1, static_cast<char>('a' + rng_() % 26));
      if (Chance(12)) s += std::string(1, '\0');
      if (Chance(4)) s = std::to_string(rng_() % 100) + "@example.com";
      return s;
    }
    if (type == "integer" || type == "number") {
      double lo = schema.value("minimum", -5.0), hi = schema.value("maximum", lo + 100);
      if (Chance(6)) return lo - 1;
      if (Chance(6)) return static_cast<int64_t>(hi) + 1;
      if (Chance(8)) return 1.0 * static_cast<int64_t>(lo + 1);
      if (Chance(10)) return int64_t{1} << 60;
      if (type == "number" && Chance(3)) return lo + 0.5;
      return static_cast<int64_t>(lo) +
             static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
    }
    if (type == "boolean") return Chance(2);
    if (type == "null") return nullptr;
    if (type == "array") {
      size_t lo = schema.value("minItems", 0), hi = schema.value("maxItems", lo + 3);
      size_t n = Chance(8) ? hi + 1 : lo + rng_() % (std::min<size_t>(hi, lo + 3) - lo + 1);
      json a = json::array();
      for (size_t i = 0; i < n; ++i)
        a.push_back(Make(schema.value("items", json::object()), depth + 1));
      return a;
    }
    json o = json::object();
    if (schema.contains("properties")) {
      for (const auto& [k, sub] : schema["properties"].items())
        if (Chance(2)) o[k] = Make(sub, depth + 1);
    }
    if (schema.contains("required"))
      for (const auto& r : schema["required"])
        if (!Chance(8))
          o[r.get<std::string>()] =
              Make(schema["properties"].value(r.get<std::string>(), json::object()), depth + 1);
    if (schema.contains("oneOf") && Chance(2)) {
      const auto& branch = schema["oneOf"][rng_() % schema["oneOf"].size()];
      for (const auto& r : branch.value("required", json::array()))
        o[r.get<std::string>()] =
            Make(schema["properties"].value(r.get<std::string>(), json::object()), depth + 1);
    }
    if (Chance(10)) o["unexpected"] = 1;
    return o;
  }

 private:
  bool Chance(unsigned one_in) { return rng_() % one_in == 0; }
  json Scalar() {
    switch (rng_() % 6) {
      case 0:
        return nullptr;
      case 1:
        return true;
      case 2:
        return 3;
      case 3:
        return -2.5;
      case 4:
        return "x";
      default:
        return json::array();
    }
  }
  std::mt19937 rng_;
};

TEST(QuickSchema, AgreesWithValijsonOnEveryToolSchema) {
  const auto tools = Tools();
  ASSERT_EQ(tools.size(), 48u);
  Generator gen(20261128);
  int answered_valid = 0, answered_invalid = 0, unsure = 0;
  for (const auto& tool : tools) {
    for (int i = 0; i < 150; ++i) {
      switch (Agreeing(tool, gen.Make(tool.schema))) {
        case QuickVerdict::kValid:
          ++answered_valid;
          break;
        case QuickVerdict::kInvalid:
          ++answered_invalid;
          break;
        case QuickVerdict::kUnsure:
          ++unsure;
          break;
      }
    }
  }
  // It answers most of the time, both ways; else the comparison above proves little.
  EXPECT_GT(answered_valid, 800) << answered_invalid << " invalid, " << unsure << " unsure";
  EXPECT_GT(answered_invalid, 800) << answered_valid << " valid, " << unsure << " unsure";
}

TEST(QuickSchema, AnswersTheCommonCallsAndLeavesTheRestToValijson) {
  const auto tools = Tools();
  const auto tool = [&](const std::string& name) -> const Tool& {
    for (const auto& t : tools)
      if (t.name == name) return t;
    throw std::runtime_error(name);
  };
  const Tool& get = tool("get_contact");
  EXPECT_EQ(Agreeing(get, json::parse(R"({"id":7})")), QuickVerdict::kValid);
  EXPECT_EQ(Agreeing(get, json::parse(R"({"email":"caf\u00e9@example.com"})")),
            QuickVerdict::kValid);
  EXPECT_EQ(Agreeing(get, json::parse(R"({"id":0})")), QuickVerdict::kInvalid);    // minimum 1
  EXPECT_EQ(Agreeing(get, json::parse(R"({"id":"7"})")), QuickVerdict::kInvalid);  // type
  EXPECT_EQ(Agreeing(get, json::parse(R"({"id":7,"email":"a@b.c"})")),
            QuickVerdict::kInvalid);                                       // oneOf: both
  EXPECT_EQ(Agreeing(get, json::parse(R"({})")), QuickVerdict::kInvalid);  // oneOf: neither
  EXPECT_EQ(Agreeing(get, json::parse(R"({"id":7,"x":1})")),
            QuickVerdict::kInvalid);  // additionalProperties
  EXPECT_EQ(Agreeing(get, json::parse(R"({"email":"ab"})")),
            QuickVerdict::kInvalid);  // minLength 3
  // Two code points of four bytes: too short, counted as valijson counts.
  EXPECT_EQ(Agreeing(get, json::parse(R"({"email":"\u00e9\u00e9"})")), QuickVerdict::kInvalid);
  // valijson's to judge: a double for an integer, a NUL byte (valijson stops counting there).
  EXPECT_EQ(Agreeing(get, json::parse(R"({"id":7.0})")), QuickVerdict::kUnsure);
  EXPECT_EQ(Agreeing(get, json::parse(R"({"email":"ab\u0000cd"})")), QuickVerdict::kUnsure);
  EXPECT_TRUE(get.compiled->Validate(json::parse(R"({"id":7.0})")).has_value());
  EXPECT_EQ(
      Agreeing(
          tool("create_contact"),
          json::parse(
              R"({"email":"a@example.com","first_name":"A","status":"subscribed","tags":["x","y"]})")),
      QuickVerdict::kValid);
  EXPECT_EQ(Agreeing(tool("list_contacts"), json::parse(R"({"status":"subscribed","limit":50})")),
            QuickVerdict::kValid);
  EXPECT_EQ(Agreeing(tool("list_contacts"), json::parse(R"({"status":"nope"})")),
            QuickVerdict::kInvalid);
  // Validate still reports what valijson finds, however the verdict came.
  auto v = get.compiled->Validate(json::parse(R"({"id":0})"));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "/id");
}

// Where valijson reads strings and names as C strings, or decodes what is not well-formed,
// the quick checker has no verdict of its own (found by review: an overlong U+0000 ends
// valijson's count of a string's length).
TEST(QuickSchema, IsUnsureWhereValijsonReadsCStrings) {
  const auto agree = [](const char* schema_text, const json& doc) {
    auto compiled = CompiledSchema::Compile(json::parse(schema_text));
    EXPECT_TRUE(compiled) << schema_text;
    if (!compiled) return QuickVerdict::kUnsure;
    const QuickVerdict quick = (*compiled)->QuickCheck(doc);
    if (quick != QuickVerdict::kUnsure) {
      EXPECT_EQ(quick == QuickVerdict::kValid, !(*compiled)->ValidateWithValijson(doc).has_value())
          << schema_text << " " << doc.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    EXPECT_EQ((*compiled)->Validate(doc).has_value(),
              (*compiled)->ValidateWithValijson(doc).has_value())
        << schema_text;
    return quick;
  };
  const std::string overlong3 =
                        "ab\xE0\x80\x80"
                        "cd",
                    overlong4 =
                        "ab\xF0\x80\x80\x80"
                        "cd";
  EXPECT_EQ(agree(R"({"type":"string","minLength":1})", std::string("\xE0\x80\x80")),
            QuickVerdict::kUnsure);
  EXPECT_EQ(agree(R"({"type":"string","minLength":3})", overlong3), QuickVerdict::kUnsure);
  EXPECT_EQ(agree(R"({"maxLength":2})", overlong4), QuickVerdict::kUnsure);
  EXPECT_EQ(agree(R"({"oneOf":[{"maxLength":2},{"type":"string"}]})", overlong3),
            QuickVerdict::kUnsure);
  EXPECT_EQ(agree(R"({"type":"string","maxLength":4})", std::string("\xED\xA0\x80")),
            QuickVerdict::kUnsure);
  EXPECT_EQ(agree(R"({"type":"string","maxLength":4})", std::string("caf\xC3\xA9")),
            QuickVerdict::kValid);
  // A NUL byte in a member's name, in a schema's property or required name.
  const json nul_member = json::parse(R"({"a\u0000b":"x"})");
  EXPECT_EQ(
      agree(R"({"properties":{"a":{"type":"string"}},"additionalProperties":false})", nul_member),
      QuickVerdict::kUnsure);
  EXPECT_EQ(agree(R"({"properties":{"a\u0000b":{"type":"string"}},"additionalProperties":false})",
                  nul_member),
            QuickVerdict::kUnsure);
  EXPECT_EQ(agree(R"({"required":["a\u0000b"]})", json::parse(R"({"a":1})")),
            QuickVerdict::kUnsure);
}

TEST(QuickSchema, KeywordsItDoesNotKnowMakeItUnsure) {
  EXPECT_EQ(QuickSchema::Build(json::parse(R"({"type":"string","format":"email"})")), nullptr);
  EXPECT_EQ(QuickSchema::Build(json::parse(R"({"$ref":"#/x"})")), nullptr);
  auto nested = QuickSchema::Build(json::parse(
      R"({"type":"object","properties":{"a":{"type":"string","pattern":"^x"},"b":{"type":"integer"}}})"));
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->Check(json::parse(R"({"a":"y"})")), QuickVerdict::kUnsure);
  EXPECT_EQ(nested->Check(json::parse(R"({"b":1})")), QuickVerdict::kValid);
  // A definite failure elsewhere still decides.
  EXPECT_EQ(nested->Check(json::parse(R"({"a":"y","b":"1"})")), QuickVerdict::kInvalid);
}

}  // namespace
}  // namespace crmd::mcp

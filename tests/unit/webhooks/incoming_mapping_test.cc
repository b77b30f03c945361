#include "src/webhooks/incoming_mapping.h"

#include <gtest/gtest.h>

#include "src/webhooks/json_path.h"

namespace crmd::webhooks {
namespace {

using nlohmann::json;

const json kPayload = json::parse(R"({
  "data": {
    "customer": {
      "emails": [{"address": "ada@example.com"}, {"address": "second@example.com"}],
      "name": {"first": "Ada", "last": "Lovelace"},
      "phone": 441234,
      "vip": true,
      "nested": [[1, 2], [3, {"deep": "x"}]]
    },
    "plan": {"id": "pro", "seats": 5},
    "empty": null
  },
  "weird-key$": "ok"
})");

std::string FindText(std::string_view path) {
  auto p = JsonPath::Parse(path);
  EXPECT_TRUE(p.has_value()) << path;
  if (!p) return "<parse error>";
  const json* v = p->Find(kPayload);
  return v ? v->dump() : "<missing>";
}

TEST(JsonPath, WalksObjectsByNameAndArraysByIndex) {
  EXPECT_EQ(FindText("data.customer.emails[0].address"), R"("ada@example.com")");
  EXPECT_EQ(FindText("data.customer.emails[1].address"), R"("second@example.com")");
  EXPECT_EQ(FindText("data.customer.nested[1][1].deep"), R"("x")");
  EXPECT_EQ(FindText("data.customer.nested[0][1]"), "2");
  EXPECT_EQ(FindText("data.plan"), R"({"id":"pro","seats":5})");
  EXPECT_EQ(FindText("weird-key$"), R"("ok")");
  EXPECT_EQ(FindText("data.empty"), "null");
}

TEST(JsonPath, MissingStepsAndWrongKindsFindNothing) {
  EXPECT_EQ(FindText("data.customer.emails[2].address"), "<missing>");  // past the end
  EXPECT_EQ(FindText("data.customer.emails.address"), "<missing>");     // name on an array
  EXPECT_EQ(FindText("data.plan[0]"), "<missing>");                     // index on an object
  EXPECT_EQ(FindText("data.plan.id.more"), "<missing>");                // name on a string
  EXPECT_EQ(FindText("nope"), "<missing>");
}

TEST(JsonPath, ParseErrorsNameThePosition) {
  struct Case {
    const char* path;
    const char* message;
  };
  for (const Case& c :
       {Case{"", "the path is empty"}, Case{".a", "expected a name at character 1"},
        Case{"a..b", "expected a name at character 3"},
        Case{"a.", "expected a name after '.' at character 3"},
        Case{"[0].a", "expected a name at character 1"},
        Case{"a[x]", "expected an array index (digits) at character 3"},
        Case{"a[]", "expected an array index (digits) at character 3"},
        Case{"a[-1]", "expected an array index (digits) at character 3"},
        Case{"a[1", "expected ']' at character 4"}, Case{"a[1]b", "unexpected 'b' at character 5"},
        Case{"a]", "unexpected ']' at character 2"}, Case{"a b", "unexpected ' ' at character 2"},
        Case{"a[1234567890]", "array index too large at character 3"}}) {
    auto p = JsonPath::Parse(c.path);
    ASSERT_FALSE(p.has_value()) << c.path;
    EXPECT_EQ(p.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(p.error().message, c.message) << c.path;
  }
}

TEST(JsonPath, LimitsLengthAndSteps) {
  EXPECT_FALSE(JsonPath::Parse(std::string(JsonPath::kMaxLength + 1, 'a')).has_value());
  std::string many = "a";
  for (size_t i = 0; i < JsonPath::kMaxSteps; ++i) many += ".a";
  EXPECT_FALSE(JsonPath::Parse(many).has_value());
  std::string indices = "a";
  for (size_t i = 1; i < JsonPath::kMaxSteps; ++i) indices += "[0]";
  EXPECT_TRUE(JsonPath::Parse(indices).has_value());
}

TEST(IncomingMapping, ParsesStringsAndObjectsAndRequiresEmail) {
  auto m =
      ParseMapping(json{{"email", "data.customer.emails[0].address"},
                        {"first_name", {{"path", "data.customer.name.first"}, {"required", true}}},
                        {"last_name", "data.customer.name.last"},
                        {"custom_fields.plan", "data.plan.id"}});
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->entries.size(), 4u);
  EXPECT_EQ(m->email().path.text(), "data.customer.emails[0].address");
  EXPECT_TRUE(m->email().required);
  for (const auto& e : m->entries) {
    if (e.target == "last_name") {
      EXPECT_FALSE(e.required);
    }
  }

  auto no_email = ParseMapping(json{{"first_name", "a"}});
  ASSERT_FALSE(no_email.has_value());
  EXPECT_EQ(no_email.error().message.rfind("mapping.email: ", 0), 0u);
}

TEST(IncomingMapping, ConfigurationErrorsNameTheField) {
  struct Case {
    json mapping;
    const char* prefix;
  };
  for (const Case& c :
       {Case{json::array(), "mapping: "},
        Case{json{{"email", "data..x"}}, "mapping.email: invalid path"},
        Case{json{{"email", "a"}, {"first_name", "b[x]"}}, "mapping.first_name: invalid path"},
        Case{json{{"email", "a"}, {"password", "b"}}, "mapping.password: unknown contact field"},
        Case{json{{"email", "a"}, {"custom_fields.", "b"}}, "mapping.custom_fields.: unknown"},
        Case{json{{"email", 3}}, "mapping.email: must be a path string"},
        Case{json{{"email", {{"path", "a"}, {"required", false}}}},
             "mapping.email: the email is always required"},
        Case{json{{"email", {{"path", "a"}, {"x", 1}}}}, "mapping.email: unknown member x"}}) {
    auto m = ParseMapping(c.mapping);
    ASSERT_FALSE(m.has_value()) << c.mapping.dump();
    EXPECT_EQ(m.error().message.rfind(c.prefix, 0), 0u) << m.error().message;
  }
}

TEST(IncomingMapping, AppliesAreCheckedWhenConfigured) {
  auto a = ParseApplies(json{{"tags", {"vip", 7}},
                             {"lists", {"newsletter"}},
                             {"status", "subscribed"},
                             {"type", "customer"}});
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(a->tags.size(), 2u);
  EXPECT_EQ(a->lists.size(), 1u);
  EXPECT_EQ(a->status, "subscribed");
  EXPECT_EQ(a->type, "customer");
  EXPECT_TRUE(ParseApplies(json()).has_value());
  for (const auto& bad : {json{{"status", "happy"}}, json{{"type", "robot"}}, json{{"tags", "vip"}},
                          json{{"colour", "red"}}, json::array()}) {
    auto r = ParseApplies(bad);
    ASSERT_FALSE(r.has_value()) << bad.dump();
    EXPECT_EQ(r.error().message.rfind("applies", 0), 0u) << r.error().message;
  }
}

TEST(IncomingMapping, MapsPayloadFieldsAndApplies) {
  auto m = ParseMapping(json{{"email", "data.customer.emails[0].address"},
                             {"first_name", "data.customer.name.first"},
                             {"phone", "data.customer.phone"},
                             {"custom_fields.plan", "data.plan"},
                             {"custom_fields.vip", "data.customer.vip"},
                             {"last_name", "data.customer.missing"}});
  ASSERT_TRUE(m.has_value());
  auto a = ParseApplies(json{{"tags", {"from-hook"}}, {"status", "subscribed"}});
  ASSERT_TRUE(a.has_value());
  auto in = MapPayload(*m, *a, kPayload);
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(in->email, "ada@example.com");
  EXPECT_EQ(in->first_name, "Ada");
  EXPECT_EQ(in->phone, "441234");           // numbers become text
  EXPECT_FALSE(in->last_name.has_value());  // optional and missing: left unchanged
  EXPECT_EQ((*in->custom_fields)["plan"], (json{{"id", "pro"}, {"seats", 5}}));
  EXPECT_EQ((*in->custom_fields)["vip"], true);
  EXPECT_EQ(in->status, "subscribed");
  ASSERT_EQ(in->tags.size(), 1u);
  EXPECT_EQ(std::get<std::string>(in->tags[0]), "from-hook");
}

TEST(IncomingMapping, ReportsEveryMissingRequiredPathAndWrongKind) {
  auto m =
      ParseMapping(json{{"email", "data.customer.emails[5].address"},
                        {"first_name", {{"path", "data.customer.name.middle"}, {"required", true}}},
                        {"last_name", "data.customer.name"},
                        {"phone", {{"path", "data.empty"}, {"required", true}}}});
  ASSERT_TRUE(m.has_value());
  auto in = MapPayload(*m, Applies{}, kPayload);
  ASSERT_FALSE(in.has_value());
  std::map<std::string, std::string> by_path;
  for (const auto& e : in.error()) by_path[e.path] = e.code;
  EXPECT_EQ(by_path["data.customer.emails[5].address"], "required");
  EXPECT_EQ(by_path["data.customer.name.middle"], "required");
  EXPECT_EQ(by_path["data.empty"], "required");              // null counts as missing
  EXPECT_EQ(by_path["data.customer.name"], "invalid_type");  // an object for a name
  EXPECT_EQ(in.error().size(), 4u);
}

TEST(IncomingMapping, EmailMustBeAString) {
  auto m = ParseMapping(json{{"email", "data.plan.seats"}});
  ASSERT_TRUE(m.has_value());
  auto in = MapPayload(*m, Applies{}, kPayload);
  ASSERT_FALSE(in.has_value());
  ASSERT_EQ(in.error().size(), 1u);
  EXPECT_EQ(in.error()[0].path, "data.plan.seats");
  EXPECT_EQ(in.error()[0].code, "invalid_type");
}

}  // namespace
}  // namespace crmd::webhooks

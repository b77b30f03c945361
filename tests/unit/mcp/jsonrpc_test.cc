#include "src/mcp/jsonrpc.h"

#include <gtest/gtest.h>

#include <string>

namespace crmd::mcp::jsonrpc {
namespace {

using nlohmann::json;

TEST(JsonRpc, ParsesRequestWithIntegerId) {
  auto p = Parse(R"({"jsonrpc":"2.0","id":7,"method":"ping","params":{}})");
  ASSERT_TRUE(p.message) << p.error->message;
  EXPECT_EQ(p.message->kind, Kind::kRequest);
  EXPECT_EQ(p.message->id, 7);
  EXPECT_EQ(p.message->method, "ping");
  EXPECT_TRUE(p.message->params.is_object());
}

TEST(JsonRpc, ParsesRequestWithStringIdAndNoParams) {
  auto p = Parse(R"({"jsonrpc":"2.0","id":"a-1","method":"tools/list"})");
  ASSERT_TRUE(p.message);
  EXPECT_EQ(p.message->id, "a-1");
  EXPECT_TRUE(p.message->params.is_null());
}

TEST(JsonRpc, ParsesNotificationWithoutId) {
  auto p = Parse(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(p.message);
  EXPECT_EQ(p.message->kind, Kind::kNotification);
}

TEST(JsonRpc, ParsesResultAndErrorResponses) {
  auto r = Parse(R"({"jsonrpc":"2.0","id":3,"result":{}})");
  ASSERT_TRUE(r.message);
  EXPECT_EQ(r.message->kind, Kind::kResponse);
  auto e = Parse(R"({"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}})");
  ASSERT_TRUE(e.message);
  EXPECT_EQ(e.message->kind, Kind::kResponse);
  EXPECT_TRUE(e.message->error.is_object());
}

TEST(JsonRpc, MalformedJsonIsParseError_JsonRpc_5_1) {
  auto p = Parse(R"({"jsonrpc":"2.0","id":1,"method":)");
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, kParseError);
  EXPECT_TRUE(p.error->id.is_null());
}

TEST(JsonRpc, InvalidUtf8IsParseError) {
  std::string body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}";
  auto p = Parse(body);
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, kParseError);
}

TEST(JsonRpc, DeepNestingIsRefusedBeforeParsing) {
  std::string body = std::string(10000, '[') + std::string(10000, ']');
  auto p = Parse(body);
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, kParseError);
  EXPECT_EQ(p.error->message, "Parse error: nesting too deep");
  // Also when the document is cut off or broken after the depth is passed.
  for (std::string broken : {std::string(100000, '['), std::string(100, '[') + "x"}) {
    auto q = Parse(broken);
    ASSERT_TRUE(q.error);
    EXPECT_EQ(q.error->code, kParseError);
    EXPECT_EQ(q.error->message, "Parse error: nesting too deep");
  }
}

// 64 levels are a document; 65 are not (the object and params are two of them).
TEST(JsonRpc, SixtyFourLevelsParseAndSixtyFiveAreTooDeep) {
  auto request = [](int arrays) {
    return R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"a":)" + std::string(arrays, '[') +
           std::string(arrays, ']') + "}}";
  };
  auto ok = Parse(request(62));
  ASSERT_TRUE(ok.message) << ok.error->message;
  EXPECT_EQ(ok.message->params["a"].size(), 1u);
  auto deep = Parse(request(63));
  ASSERT_TRUE(deep.error);
  EXPECT_EQ(deep.error->code, kParseError);
  EXPECT_EQ(deep.error->message, "Parse error: nesting too deep");
}

TEST(JsonRpc, BracketsInsideStringsDoNotCountAsNesting) {
  std::string deep(200, '[');
  auto p = Parse(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"s":")" + deep + R"("}})");
  EXPECT_TRUE(p.message);
}

TEST(JsonRpc, BatchIsInvalidRequest) {
  auto p = Parse(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])");
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, kInvalidRequest);
}

TEST(JsonRpc, WrongVersionIsInvalidRequestEchoingId) {
  auto p = Parse(R"({"jsonrpc":"1.0","id":5,"method":"ping"})");
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, kInvalidRequest);
  EXPECT_EQ(p.error->id, 5);
}

TEST(JsonRpc, NullIdIsInvalidRequest_McpBasicRequests) {
  auto p = Parse(R"({"jsonrpc":"2.0","id":null,"method":"ping"})");
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, kInvalidRequest);
}

TEST(JsonRpc, FractionalIdIsInvalidRequest) {
  auto p = Parse(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})");
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, kInvalidRequest);
}

TEST(JsonRpc, NonStringMethodAndNonObjectParamsAreInvalid) {
  EXPECT_EQ(Parse(R"({"jsonrpc":"2.0","id":1,"method":3})").error->code, kInvalidRequest);
  EXPECT_EQ(Parse(R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})").error->code,
            kInvalidRequest);
  EXPECT_EQ(Parse(R"("just a string")").error->code, kInvalidRequest);
}

TEST(JsonRpc, ResponseNeedsExactlyOneOfResultAndError) {
  EXPECT_TRUE(Parse(R"({"jsonrpc":"2.0","id":1})").error);
  EXPECT_TRUE(Parse(R"({"jsonrpc":"2.0","id":1,"result":{},"error":{}})").error);
}

TEST(JsonRpc, ErrorWithoutIdOmitsTheIdMember) {
  json e = MakeError({kParseError, "Parse error", nullptr, nullptr});
  EXPECT_FALSE(e.contains("id"));
  EXPECT_EQ(e["error"]["code"], kParseError);
  EXPECT_EQ(e["jsonrpc"], "2.0");
  json with_id = MakeError({kMethodNotFound, "Method not found", 9, json{{"m", "x"}}});
  EXPECT_EQ(with_id["id"], 9);
  EXPECT_EQ(with_id["error"]["data"]["m"], "x");
}

TEST(JsonRpc, MakeResultEchoesId) {
  json r = MakeResult("abc", json::object());
  EXPECT_EQ(r["id"], "abc");
  EXPECT_TRUE(r["result"].is_object());
}

}  // namespace
}  // namespace crmd::mcp::jsonrpc

namespace crmd::mcp::jsonrpc {
namespace {

// Robustness: arbitrary bytes and mutations of a valid message never crash and always
// yield exactly one of a message or an error.
TEST(JsonRpcRobustness, ArbitraryInputYieldsMessageXorError) {
  std::string valid =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}})";
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1103515245u + 12345u; };
  for (int i = 0; i < 5000; ++i) {
    std::string s = valid;
    int edits = 1 + next() % 4;
    for (int e = 0; e < edits; ++e) {
      size_t pos = next() % (s.size() + 1);
      switch (next() % 3) {
        case 0:
          s.insert(pos, 1, static_cast<char>(next() % 256));
          break;
        case 1:
          if (pos < s.size()) s.erase(pos, 1);
          break;
        default:
          if (pos < s.size()) s[pos] = static_cast<char>(next() % 256);
          break;
      }
    }
    auto p = Parse(s);
    ASSERT_NE(p.message.has_value(), p.error.has_value()) << s;
  }
}

}  // namespace
}  // namespace crmd::mcp::jsonrpc

namespace crmd::mcp::jsonrpc {
namespace {

TEST(JsonRpc, AMemberGivenTwiceIsAParseError) {
  auto out = Parse(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping"})");
  ASSERT_FALSE(out.message.has_value());
  EXPECT_EQ(out.error->code, kParseError);
  EXPECT_NE(out.error->message.find("method"), std::string::npos);
}

}  // namespace
}  // namespace crmd::mcp::jsonrpc

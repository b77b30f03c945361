// requestState sealing (MCP 2026-07-28 basic/patterns/mrtr "Server Requirements" 4-5).
#include "src/mcp/request_state.h"

#include <gtest/gtest.h>

#include "src/core/crypto.h"
#include "tests/support/fake_clock.h"

namespace crmd::mcp {
namespace {

using nlohmann::json;

class RequestStateTest : public ::testing::Test {
 protected:
  static RequestStateKey Key(std::string id, char fill) {
    return {std::move(id), std::string(32, fill)};
  }

  RequestStateBinding Binding() const {
    return {.client_id = "c1",
            .subject = "alice",
            .method = "tools/call",
            .name = "delete_contacts",
            .arguments_digest = RequestStateCodec::ArgumentsDigest(json{{"ids", {1, 2}}})};
  }

  FakeClock clock_;
  RequestStateCodec codec_{{Key("k1", 'a')}, {.ttl_s = 600}, clock_};
};

TEST_F(RequestStateTest, RoundTripsTheToolsState_Mrtr_ServerRequirements3) {
  auto token = codec_.Seal(Binding(), json{{"round", 1}, {"item", "x"}});
  ASSERT_TRUE(token);
  auto state = codec_.Open(*token, Binding());
  ASSERT_TRUE(state) << state.error().message;
  EXPECT_EQ(*state, (json{{"round", 1}, {"item", "x"}}));
}

TEST_F(RequestStateTest, AnotherNodeWithTheSameKeyOpensIt_Mrtr_BasicWorkflow) {
  FakeClock other_clock;
  RequestStateCodec other({Key("k1", 'a')}, {.ttl_s = 600}, other_clock);
  auto token = codec_.Seal(Binding(), json{{"round", 1}});
  ASSERT_TRUE(token);
  EXPECT_TRUE(other.Open(*token, Binding()));
}

TEST_F(RequestStateTest, TamperedOrForgedStateIsRefused_Mrtr_ServerRequirements4) {
  auto token = codec_.Seal(Binding(), json{{"round", 1}});
  ASSERT_TRUE(token);
  // Flip one character of the payload, of the MAC; another key; garbage; another version.
  std::string t = *token;
  auto dot2 = t.find('.', t.find('.') + 1);
  std::string payload_flipped = t;
  payload_flipped[dot2 + 3] = payload_flipped[dot2 + 3] == 'A' ? 'B' : 'A';
  std::string mac_flipped = t;
  mac_flipped[t.size() - 3] = mac_flipped[t.size() - 3] == 'A' ? 'B' : 'A';
  RequestStateCodec other({Key("k1", 'b')}, {}, clock_);
  auto foreign = other.Seal(Binding(), json{{"round", 99}});
  ASSERT_TRUE(foreign);
  for (const std::string& bad :
       {payload_flipped, mac_flipped, *foreign, std::string("s1.k1.e30.AAAA"), std::string(""),
        std::string("s2") + t.substr(2), std::string("....")}) {
    auto r = codec_.Open(bad, Binding());
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  }
}

TEST_F(RequestStateTest, StateIsBoundToClientSubjectToolAndArguments_Mrtr_ServerRequirements5) {
  auto token = codec_.Seal(Binding(), json{{"round", 1}});
  ASSERT_TRUE(token);
  auto other_client = Binding();
  other_client.client_id = "c2";
  auto other_subject = Binding();
  other_subject.subject = "bob";
  auto other_tool = Binding();
  other_tool.name = "delete_lists";
  auto other_method = Binding();
  other_method.method = "prompts/get";
  auto other_args = Binding();
  other_args.arguments_digest = RequestStateCodec::ArgumentsDigest(json{{"ids", {1, 2, 3}}});
  for (const auto& b : {other_client, other_subject, other_tool, other_method, other_args}) {
    EXPECT_FALSE(codec_.Open(*token, b));
  }
  EXPECT_TRUE(codec_.Open(*token, Binding()));
}

TEST_F(RequestStateTest, ExpiredStateIsRefused_Mrtr_ServerRequirements5) {
  auto token = codec_.Seal(Binding(), json{{"round", 1}});
  ASSERT_TRUE(token);
  clock_.Advance(599);
  EXPECT_TRUE(codec_.Open(*token, Binding()));
  clock_.Advance(1);
  auto r = codec_.Open(*token, Binding());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("expired"), std::string::npos);
}

TEST_F(RequestStateTest, OldKeyStillOpensAfterRotationNewKeySeals) {
  auto old_token = codec_.Seal(Binding(), json{{"round", 1}});
  ASSERT_TRUE(old_token);
  RequestStateCodec rotated({Key("k2", 'c'), Key("k1", 'a')}, {}, clock_);
  EXPECT_TRUE(rotated.Open(*old_token, Binding()));
  auto new_token = rotated.Seal(Binding(), json{{"round", 2}});
  ASSERT_TRUE(new_token);
  EXPECT_EQ(new_token->substr(0, 6), "s1.k2.");
  EXPECT_FALSE(codec_.Open(*new_token, Binding()));  // the old ring does not know k2
}

TEST_F(RequestStateTest, ArgumentsDigestIgnoresMemberOrder) {
  EXPECT_EQ(RequestStateCodec::ArgumentsDigest(json::parse(R"({"a":1,"b":[1,2]})")),
            RequestStateCodec::ArgumentsDigest(json::parse(R"({"b":[1,2],"a":1})")));
  EXPECT_NE(RequestStateCodec::ArgumentsDigest(json::parse(R"({"a":1})")),
            RequestStateCodec::ArgumentsDigest(json::parse(R"({"a":2})")));
}

TEST_F(RequestStateTest, OversizedStateIsAnInternalErrorWhenSealing) {
  RequestStateCodec small({Key("k1", 'a')}, {.ttl_s = 600, .max_token_bytes = 256}, clock_);
  auto r = small.Seal(Binding(), json{{"blob", std::string(1000, 'x')}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kInternal);
}

}  // namespace
}  // namespace crmd::mcp

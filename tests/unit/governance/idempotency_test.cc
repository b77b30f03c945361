// governance::Idempotency: the one helper behind the tools' idempotency_key, REST's
// Idempotency-Key and crmctl.
#include "src/governance/idempotency.h"

#include <gtest/gtest.h>

#include "tests/unit/crm/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;
using Outcome = governance::Idempotency::Outcome;

class IdempotencyTest : public testing::CrmFixture {
 protected:
  governance::Idempotency& idem() { return *s->governance.idempotency; }
  governance::Idempotency::Request Req(std::string fingerprint = "f1") {
    return {.scope = "rest:api_key:1:POST /x", .key = "k-1", .fingerprint = std::move(fingerprint)};
  }
  int runs = 0;
  std::function<std::optional<json>()> Op(std::optional<json> keep = json{{"n", 1}}) {
    return [this, keep] {
      ++runs;
      return keep;
    };
  }
};

TEST_F(IdempotencyTest, RunKeepsTheFirstAnswerAndReplaysIt) {
  auto first = idem().Run(Req(), Op());
  ASSERT_TRUE(first);
  EXPECT_EQ(first->outcome, Outcome::kRan);
  EXPECT_TRUE(first->kept);
  auto again = idem().Run(Req(), Op(json{{"n", 2}}));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->outcome, Outcome::kReplayed);
  EXPECT_EQ(again->answer["n"], 1);
  EXPECT_EQ(runs, 1);
}

TEST_F(IdempotencyTest, RunRefusesTheKeyWithAnotherFingerprint) {
  ASSERT_TRUE(idem().Run(Req("f1"), Op()));
  auto other = idem().Run(Req("f2"), Op());
  ASSERT_TRUE(other);
  EXPECT_EQ(other->outcome, Outcome::kReused);
  EXPECT_EQ(runs, 1);
}

TEST_F(IdempotencyTest, RunKeepsNothingWhenTheOperationDeclines) {
  ASSERT_TRUE(idem().Run(Req(), Op(std::nullopt)));
  auto retry = idem().Run(Req(), Op());
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->outcome, Outcome::kRan);
  EXPECT_EQ(runs, 2);
}

TEST_F(IdempotencyTest, RunRefusesARepeatWhileTheFirstStillRuns) {
  std::optional<Outcome> inner;
  auto first = idem().Run(Req(), [&]() -> std::optional<json> {
    auto repeat = idem().Run(Req(), Op());
    if (repeat) inner = repeat->outcome;
    return json{{"n", 1}};
  });
  ASSERT_TRUE(first);
  EXPECT_EQ(inner, Outcome::kInUse);
  EXPECT_EQ(runs, 0);
}

TEST_F(IdempotencyTest, AnswersLastTwentyFourHours) {
  ASSERT_TRUE(idem().Run(Req(), Op()));
  clock.Advance(governance::kIdempotencyWindowSeconds - 1);
  EXPECT_EQ(idem().Run(Req(), Op())->outcome, Outcome::kReplayed);
  clock.Advance(1);
  EXPECT_EQ(idem().Run(Req(), Op())->outcome, Outcome::kRan);
  EXPECT_EQ(runs, 2);
}

TEST_F(IdempotencyTest, OnceKeepsTheAnswerOnlyWhenTheTransactionCommits) {
  int firsts = 0;
  auto first = [&]() -> Result<json> { return json{{"id", ++firsts}}; };
  auto rolled_back = db->Write([&](store::Conn& c) -> Result<json> {
    auto a = idem().Once(c, "oauth:client-a:create_x", "k", first);
    if (!a) return a;
    return Fail(Errc::kInvalidArgument, "the create failed after the key was kept");
  });
  EXPECT_FALSE(rolled_back);
  for (int i = 0; i < 2; ++i) {
    auto a = db->Write(
        [&](store::Conn& c) { return idem().Once(c, "oauth:client-a:create_x", "k", first); });
    ASSERT_TRUE(a);
    EXPECT_EQ((*a)["id"], 2);
  }
  EXPECT_EQ(firsts, 2);
}

TEST_F(IdempotencyTest, OnceWithoutAKeyAlwaysRuns) {
  int firsts = 0;
  for (int i = 0; i < 2; ++i) {
    auto a = db->Write([&](store::Conn& c) {
      return idem().Once(c, "s", "", [&]() -> Result<json> { return json{{"id", ++firsts}}; });
    });
    ASSERT_TRUE(a);
  }
  EXPECT_EQ(firsts, 2);
}

}  // namespace
}  // namespace crmd::crm

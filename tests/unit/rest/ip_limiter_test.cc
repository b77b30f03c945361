// The public routes' per-key limit (src/rest/ip_limiter.h): never more than the limit
// within any 60 seconds, including around a minute's boundary; a Retry-After that is right.
#include "src/rest/ip_limiter.h"

#include <gtest/gtest.h>

#include <deque>

#include "tests/support/fake_clock.h"

namespace crmd::rest {
namespace {

TEST(IpLimiter, AMinutesBoundaryDoesNotDoubleTheLimit) {
  FakeClock clock(60 * 1000 + 59);  // the last second of a minute
  IpLimiter limiter(10, clock);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(limiter.Hit("a"), 0) << i;
  EXPECT_GT(limiter.Hit("a"), 0);
  clock.Advance(1);  // a new minute: fixed windows would allow ten more now
  int wait = limiter.Hit("a");
  EXPECT_GT(wait, 0);
  // The ten are forgotten once their 5-second slot is more than 60 s old, and the
  // Retry-After says exactly when that is.
  clock.Advance(wait - 1);
  EXPECT_GT(limiter.Hit("a"), 0);
  clock.Advance(1);
  EXPECT_EQ(limiter.Hit("a"), 0);
  EXPECT_EQ(limiter.Hit("b"), 0);  // keys are counted apart
}

TEST(IpLimiter, NoSixtySecondsEverHoldMoreThanTheLimit) {
  FakeClock clock(1'760'000'003);
  IpLimiter limiter(7, clock);
  std::deque<int64_t> allowed;  // times of the allowed requests
  int refused = 0;
  for (int second = 0; second < 600; ++second) {
    // A burst at some seconds, nothing at others: whatever a client might do.
    int tries = (second % 17 == 0) ? 9 : (second % 5 == 0 ? 1 : 0);
    for (int i = 0; i < tries; ++i) {
      if (limiter.Hit("k") == 0) {
        allowed.push_back(clock.NowUnix());
      } else {
        ++refused;
      }
    }
    while (!allowed.empty() && allowed.front() <= clock.NowUnix() - 60) allowed.pop_front();
    ASSERT_LE(allowed.size(), 7u) << "at second " << second;
    clock.Advance(1);
  }
  EXPECT_GT(refused, 0);
}

TEST(IpLimiter, ARefusedRequestIsNotCountedAndZeroMeansNoLimit) {
  FakeClock clock(1'760'000'000);  // the start of a 5-second slot
  IpLimiter limiter(2, clock);
  EXPECT_EQ(limiter.Hit("a"), 0);
  EXPECT_EQ(limiter.Hit("a"), 0);
  clock.Advance(30);  // refusals in a later slot than the two allowed
  for (int i = 0; i < 50; ++i) EXPECT_EQ(limiter.Hit("a"), 35);
  clock.Advance(35);  // the allowed two are past; counted refusals would still be here
  EXPECT_EQ(limiter.Hit("a"), 0);
  EXPECT_EQ(limiter.Hit("a"), 0);
  IpLimiter none(0, clock);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(none.Hit("a"), 0);
}

TEST(IpLimiter, ASprayOfAddressesStaysBounded) {
  FakeClock clock(1'760'000'000);
  IpLimiter limiter(1, clock);
  ASSERT_EQ(limiter.Hit("first"), 0);
  ASSERT_GT(limiter.Hit("first"), 0);
  // Twice the cap of live keys within one slot: the counts are dropped rather than let
  // grow, and every address is still served.
  for (size_t i = 0; i < 2 * IpLimiter::kMaxKeys; ++i)
    ASSERT_EQ(limiter.Hit("k" + std::to_string(i)), 0) << i;
  EXPECT_EQ(limiter.Hit("first"), 0);  // forgotten with the rest
}

}  // namespace
}  // namespace crmd::rest

// The housekeeping job's own rules on a migrated database (SQLite, and PostgreSQL for the
// pg. copies): one lease holder at a time, and the rules the composition root adds run
// after the built-in ones.
#include "src/jobs/housekeeping.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "src/jobs/job_leases_repo.h"
#include "src/store/db.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_server.h"

namespace crmd::jobs {
namespace {

class HousekeepingJob : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<crmd::testing::ScratchDatabase>(dir_.path() + "/j.db", false,
                                                                /*migrated=*/true);
    auto db = store::Open(scratch_->url(), 2);
    ASSERT_TRUE(db.has_value()) << db.error().detail;
    db_ = std::move(*db);
  }
  Result<bool> Take(const std::string& holder, int64_t until, int64_t now) {
    return db_->Write([&](store::Conn& c) {
      return job_leases_repo::TakeOrRenew(c, "test-job", holder, until, now);
    });
  }

  crmd::testing::TempDir dir_;
  std::unique_ptr<crmd::testing::ScratchDatabase> scratch_;
  std::unique_ptr<store::Database> db_;
};

TEST_F(HousekeepingJob, ALeaseHasOneHolderUntilItRunsOut) {
  ASSERT_EQ(Take("node-a", 1'000, 100), true);
  EXPECT_EQ(Take("node-b", 1'100, 200), false);  // a's lease runs until 1000
  EXPECT_EQ(Take("node-a", 1'200, 300), true);   // the holder renews it
  EXPECT_EQ(Take("node-b", 1'300, 1'199), false);
  EXPECT_EQ(Take("node-b", 2'000, 1'200), true);  // run out: another node takes it
  EXPECT_EQ(Take("node-a", 2'100, 1'300), false);
}

// A rule of the composition root's (as src/app adds the MCP sessions') sweeps with the
// cutoff it computes from the pass's time; what it deleted counts in the pass's total.
std::vector<int64_t> g_cutoffs;
Result<int64_t> RecordCutoff(store::Conn&, int64_t cutoff) {
  g_cutoffs.push_back(cutoff);
  return int64_t{3};
}

TEST_F(HousekeepingJob, TheRulesItIsGivenRunAfterItsOwnWithTheirCutoffs) {
  g_cutoffs.clear();
  FakeClock clock(1'800'000'000);
  Housekeeping hk(*db_, clock,
                  {.interval_s = 0,
                   .retention_days = 30,
                   .more_rules = {{"extra", &RecordCutoff, [](int64_t now, int64_t retention) {
                                     return now - retention;
                                   }}}});
  auto n = hk.RunOnce();
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(*n, 3);  // the empty database had nothing else to delete
  ASSERT_EQ(g_cutoffs.size(), 1u);
  EXPECT_EQ(g_cutoffs[0], 1'800'000'000 - 30 * 24 * 3600);
}

}  // namespace
}  // namespace crmd::jobs

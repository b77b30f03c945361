#include "src/marketing/reports.h"

#include <gtest/gtest.h>

#include "src/marketing/campaign_sends_repo.h"
#include "src/marketing/campaigns.h"
#include "src/marketing/common.h"
#include "tests/unit/marketing/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;

constexpr int64_t kDay = 86400;

class ReportsTest : public testing::MarketingDb {
 protected:
  void SetUp() override {
    MarketingDb::SetUp();
    day0_ = *marketing::ParseRfc3339("2026-11-01");
    clock_.Set(day0_ + 10 * kDay);
    // Day 0: 2 form leads; day 1: 1 api customer; day 3: 1 unsubscribed import; day 9: 1.
    AddContact("a@x.io", "subscribed", day0_ + 100, "lead", "form");
    AddContact("b@x.io", "subscribed", day0_ + 200, "lead", "form");
    AddContact("c@x.io", "subscribed", day0_ + kDay + 5, "customer", "api");
    AddContact("d@x.io", "unsubscribed", day0_ + 3 * kDay, "lead", "import");
    AddContact("e@x.io", "subscribed", day0_ + 9 * kDay, "customer", "form");
    AddContact("old@x.io", "subscribed", day0_ - 90 * kDay, "lead", "form");
  }
  int64_t day0_ = 0;
};

TEST_F(ReportsTest, ContactsReportBucketsByDayWithZeroDaysAndBreakdowns) {
  marketing::ReportService r(*db_, clock_);
  auto rep = r.ContactsReport({.from = day0_, .to = day0_ + 4 * kDay, .interval = "day"});
  ASSERT_TRUE(rep) << rep.error().message;
  auto& s = (*rep)["series"];
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0]["new_contacts"], 2);
  EXPECT_EQ(s[1]["new_contacts"], 1);
  EXPECT_EQ(s[2]["new_contacts"], 0);
  EXPECT_EQ(s[3]["new_contacts"], 1);
  EXPECT_EQ(s[0]["start"], "2026-11-01T00:00:00Z");
  EXPECT_EQ((*rep)["total_at_start"], 1);
  EXPECT_EQ((*rep)["new_contacts"], 4);
  EXPECT_EQ((*rep)["total_at_end"], 5);
  EXPECT_EQ((*rep)["by_source"]["form"], 2);
  EXPECT_EQ((*rep)["by_source"]["api"], 1);
  EXPECT_EQ((*rep)["by_status"]["unsubscribed"], 1);
}

TEST_F(ReportsTest, ContactsReportByWeekAndRangeLimits) {
  marketing::ReportService r(*db_, clock_);
  auto rep = r.ContactsReport({.from = day0_, .to = day0_ + 14 * kDay, .interval = "week"});
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["series"][0]["new_contacts"], 4);
  EXPECT_EQ((*rep)["series"][1]["new_contacts"], 1);
  EXPECT_FALSE(r.ContactsReport({.from = day0_, .to = day0_, .interval = "day"}));
  EXPECT_FALSE(r.ContactsReport({.from = day0_, .to = day0_ + 500 * kDay, .interval = "day"}));
  EXPECT_FALSE(r.ContactsReport({.from = day0_, .to = day0_ + kDay, .interval = "month"}));
}

TEST_F(ReportsTest, DashboardCountsByStatusTypeGrowthAndMarketing) {
  marketing::ReportService r(*db_, clock_);
  marketing::CampaignService campaigns(*db_, clock_);
  ASSERT_TRUE(campaigns.Create(actor_, {{"name", "draft one"}}));
  auto d = r.Dashboard();
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ((*d)["contacts"]["total"], 6);
  EXPECT_EQ((*d)["contacts"]["by_status"]["subscribed"], 5);
  EXPECT_EQ((*d)["contacts"]["by_type"]["customer"], 2);
  EXPECT_EQ((*d)["growth"]["last_7_days"], 2);  // d (day 3) and e (day 9); now is day 10
  EXPECT_EQ((*d)["growth"]["last_30_days"], 5);
  EXPECT_EQ((*d)["campaigns"]["by_status"]["draft"], 1);
  EXPECT_TRUE((*d)["campaigns"]["active"].empty());
  EXPECT_TRUE((*d)["forms"].contains("available"));
}

TEST_F(ReportsTest, DashboardShowsFormsWhenTheTableExists) {
  // The forms table comes with migration 0030 (REST API v1).
  Exec("DELETE FROM forms", {});
  Exec(
      "INSERT INTO forms (name, generated_contacts, created_at, updated_at) "
      "VALUES ('Footer', 12, 0, 0), ('Popup', 30, 0, 0)",
      {});
  marketing::ReportService r(*db_, clock_);
  auto d = r.Dashboard();
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)["forms"]["available"], true);
  EXPECT_EQ((*d)["forms"]["total_generated"], 42);
  EXPECT_EQ((*d)["forms"]["top"][0]["name"], "Popup");
}

TEST_F(ReportsTest, CampaignReportCountsRecipientOutcomes) {
  marketing::ReportService r(*db_, clock_);
  marketing::CampaignService campaigns(*db_, clock_);
  int64_t list = AddList("all");
  for (int64_t id = 1; id <= 5; ++id) InList(id, list);
  auto k = campaigns.Create(actor_, {{"name", "n"},
                                     {"subject", "s"},
                                     {"from_email", "a@b.io"},
                                     {"text_body", "t"},
                                     {"audience", {{"lists", {list}}}}});
  ASSERT_TRUE(k);
  auto before = r.CampaignReport(k->id);
  ASSERT_TRUE(before);
  EXPECT_EQ((*before)["audience"]["resolves_now"], 4);  // d is unsubscribed
  ASSERT_TRUE(db_->Write([&](store::Conn& c) { return campaigns.Activate(c, actor_, k->id); }));
  // What the send loop records: two sent, one failed, one still pending; then an open of
  // one and a bounce report of the other. The report reads the counters, not the rows.
  ASSERT_TRUE(db_->Write([&](store::Conn& c) -> Result<bool> {
    namespace send = marketing::campaign_sends_repo;
    for (int64_t contact : {1, 2})
      if (auto s = send::MarkSent(c, k->id, contact, "<m" + std::to_string(contact) + "@b.io>", 5);
          !s || !*s)
        return Fail(Errc::kInternal, "mark sent");
    if (auto s = send::MarkFailed(c, k->id, 3, "550 no such user", 550, 5); !s || !*s)
      return Fail(Errc::kInternal, "mark failed");
    if (auto s = send::MarkEvent(c, k->id, 1, "opened", 6); !s || !*s)
      return Fail(Errc::kInternal, "open");
    if (auto s = send::MarkEvent(c, k->id, 1, "opened", 7); !s || *s)
      return Fail(Errc::kInternal, "twice");
    if (auto s = send::MarkEvent(c, k->id, 2, "bounced", 6); !s || !*s)
      return Fail(Errc::kInternal, "bounce");
    return true;
  }));
  auto rep = r.CampaignReport(k->id);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["audience"]["recipients_recorded"], 4);
  EXPECT_EQ((*rep)["outcomes"]["queued"], 4);
  EXPECT_EQ((*rep)["outcomes"]["pending"], 1);
  EXPECT_EQ((*rep)["outcomes"]["sent"], 2);
  EXPECT_EQ((*rep)["outcomes"]["failed"], 1);
  EXPECT_EQ((*rep)["outcomes"]["opened"], 1);
  EXPECT_EQ((*rep)["outcomes"]["bounced"], 1);
  EXPECT_EQ((*rep)["totals"]["sent"], 2);
  EXPECT_EQ((*rep)["totals"]["delivered"], 1);
  EXPECT_DOUBLE_EQ((*rep)["rates"]["delivery"].get<double>(), 0.5);
  EXPECT_EQ(r.CampaignReport(999).error().code, Errc::kNotFound);
}

TEST_F(ReportsTest, AutomationReportReadsTheCountersKeptAsRunsMove) {
  Exec(
      "INSERT INTO automations (id, name, trigger_type, steps, status, created_at, updated_at) "
      "VALUES (7, 'a', 'contact_created', "
      "'[{\"type\":\"wait\",\"days\":1},{\"type\":\"send_email\",\"subject\":\"s\",\"text_body\":"
      "\"t\"}]', 'active', 0, 0)",
      {});
  Exec(
      "INSERT INTO automation_stats (automation_id, enrolled, completed, exited, cancelled) "
      "VALUES (7, 5, 2, 0, 1)",
      {});
  Exec(
      "INSERT INTO automation_step_stats (automation_id, step_index, done, failed, skipped) "
      "VALUES (7, 0, 3, 0, 0), (7, 1, 1, 1, 1)",
      {});
  marketing::ReportService r(*db_, clock_);
  auto rep = r.AutomationReport(7);
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_EQ((*rep)["enrolments"]["total"], 5);
  EXPECT_EQ((*rep)["enrolments"]["completed"], 2);
  EXPECT_EQ((*rep)["enrolments"]["cancelled"], 1);
  EXPECT_EQ((*rep)["enrolments"]["active"], 2);
  EXPECT_DOUBLE_EQ((*rep)["completion_rate"].get<double>(), 0.4);
  auto& steps = (*rep)["steps"];
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0]["reached"], 3);
  EXPECT_EQ(steps[0]["done"], 3);
  EXPECT_EQ(steps[1]["type"], "send_email");
  EXPECT_EQ(steps[1]["sent"], 1);
  EXPECT_EQ(steps[1]["failed"], 1);
  EXPECT_EQ(steps[1]["skipped"], 1);
  EXPECT_EQ(steps[1]["reached"], 3);
}

TEST(MarketingTime, ParsesRfc3339AndDates) {
  EXPECT_EQ(marketing::ParseRfc3339("1970-01-02"), 86400);
  EXPECT_EQ(marketing::ParseRfc3339("1970-01-01T01:00:00Z"), 3600);
  EXPECT_EQ(marketing::ParseRfc3339("1970-01-01T01:00:00.250+01:00"), 0);
  EXPECT_EQ(marketing::ParseRfc3339("1970-01-01T01:00:00"), std::nullopt);
  EXPECT_EQ(marketing::ParseRfc3339("yesterday"), std::nullopt);
  EXPECT_EQ(marketing::DecodeIdCursor(marketing::EncodeIdCursor(42)).value(), 42);
  EXPECT_EQ(marketing::ClampLimit(1000), 100);
  EXPECT_EQ(marketing::ClampLimit(std::nullopt), 25);
}

}  // namespace
}  // namespace crmd::crm

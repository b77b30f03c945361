// The contact counters that triggers keep (migration 0053) against the full scans they
// replace, through the services, on SQLite and (pg.) PostgreSQL: after a mixed sequence of
// creates, updates, status changes, memberships, deletions (contacts and a list) and a
// bulk import with a failing item, every counter-backed answer (dashboard, contacts report,
// list and tag member counts, a draft campaign's audience) equals what a scan computes; a
// rolled-back write leaves the counters as they were.
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "src/crm/contacts_repo.h"
#include "src/marketing/campaigns_repo.h"
#include "src/marketing/reporting_repo.h"
#include "src/marketing/reports.h"
#include "tests/unit/crm/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;
using store::Conn;
using store::Value;

constexpr int64_t kDay = 86400;

class Counters : public testing::CrmFixture {
 protected:
  void SetUp() override {
    CrmFixture::SetUp();
    // The marketing services (marketing::MakeServices) are not part of this fixture; the
    // reports need only the database and the clock.
    reports_ = std::make_unique<marketing::ReportService>(*db, clock);
  }

  json Scan(const std::string& sql, const std::vector<Value>& params = {}) {
    auto r =
        db->Read([&](Conn& c) { return marketing::reporting_repo::GroupCounts(c, sql, params); });
    EXPECT_TRUE(r) << r.error().detail;
    return r ? *r : json();
  }
  int64_t ScanOne(const std::string& sql, const std::vector<Value>& params = {}) {
    auto r = db->Read([&](Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne(sql, params);
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    });
    EXPECT_TRUE(r) << r.error().detail;
    return r ? *r : -1;
  }
  int64_t CreatedIn(int64_t from, int64_t to) {
    return ScanOne("SELECT COUNT(*) FROM contacts WHERE created_at >= ? AND created_at < ?",
                   {from, to});
  }
  // Every counter row, for before/after comparisons.
  std::string CounterRows() {
    std::string out;
    for (const char* sql :
         {"SELECT dim, val, n FROM contact_totals ORDER BY dim, val",
          "SELECT day, status, source, n FROM contact_daily ORDER BY day, status, source",
          "SELECT kind, group_id, status, n FROM group_member_counts ORDER BY kind, group_id, "
          "status"}) {
      auto rows = db->Read([&](Conn& c) { return c.Query(sql); });
      EXPECT_TRUE(rows);
      if (!rows) continue;
      for (const auto& r : *rows) {
        for (size_t i = 0; i < r.size(); ++i) out += (r.IsNull(i) ? "NULL" : r.Str(i)) + ",";
        out += "\n";
      }
      out += "--\n";
    }
    return out;
  }

  void ExpectContactsReportMatchesScan(int64_t from, int64_t to, const std::string& interval) {
    SCOPED_TRACE("report from " + std::to_string(from) + " to " + std::to_string(to) + " by " +
                 interval);
    auto rep = reports_->ContactsReport({.from = from, .to = to, .interval = interval});
    ASSERT_TRUE(rep) << rep.error().message;
    const int64_t bucket = interval == "day" ? kDay : 7 * kDay;
    const json& series = (*rep)["series"];
    ASSERT_EQ(series.size(), static_cast<size_t>((to - from + bucket - 1) / bucket));
    for (size_t i = 0; i < series.size(); ++i) {
      int64_t start = from + static_cast<int64_t>(i) * bucket;
      EXPECT_EQ(series[i]["new_contacts"].get<int64_t>(),
                CreatedIn(start, std::min(start + bucket, to)))
          << "bucket " << i;
    }
    EXPECT_EQ((*rep)["total_at_start"].get<int64_t>(),
              ScanOne("SELECT COUNT(*) FROM contacts WHERE created_at < ?", {from}));
    EXPECT_EQ((*rep)["new_contacts"].get<int64_t>(), CreatedIn(from, to));
    EXPECT_EQ((*rep)["by_source"],
              Scan("SELECT source, COUNT(*) FROM contacts WHERE created_at >= ? AND created_at < ? "
                   "GROUP BY source",
                   {from, to}));
    EXPECT_EQ((*rep)["by_status"],
              Scan("SELECT status, COUNT(*) FROM contacts WHERE created_at >= ? AND created_at < ? "
                   "GROUP BY status",
                   {from, to}));
  }

  void ExpectEveryCounterMatchesScan() {
    const int64_t now = clock.NowUnix();
    auto dash = reports_->Dashboard();
    ASSERT_TRUE(dash) << dash.error().message;
    const json& k = (*dash)["contacts"];
    EXPECT_EQ(k["by_status"], Scan("SELECT status, COUNT(*) FROM contacts GROUP BY status"));
    EXPECT_EQ(k["by_type"], Scan("SELECT type, COUNT(*) FROM contacts GROUP BY type"));
    EXPECT_EQ(k["total"].get<int64_t>(), ScanOne("SELECT COUNT(*) FROM contacts"));
    const json& g = (*dash)["growth"];
    EXPECT_EQ(g["last_7_days"].get<int64_t>(),
              ScanOne("SELECT COUNT(*) FROM contacts WHERE created_at >= ?", {now - 7 * kDay}));
    EXPECT_EQ(g["last_30_days"].get<int64_t>(),
              ScanOne("SELECT COUNT(*) FROM contacts WHERE created_at >= ?", {now - 30 * kDay}));
    EXPECT_EQ(g["previous_30_days"].get<int64_t>(), CreatedIn(now - 60 * kDay, now - 30 * kDay));

    const int64_t today = now / kDay * kDay;
    // The tool's default (whole days), a range starting and ending inside days, weeks
    // from inside a day, and a range within one day.
    ExpectContactsReportMatchesScan(today - 29 * kDay, today + kDay, "day");
    ExpectContactsReportMatchesScan(now - 20 * kDay - 3600, now + 7200, "day");
    ExpectContactsReportMatchesScan(now - 40 * kDay + 123, now + kDay, "week");
    ExpectContactsReportMatchesScan(now - 5000, now + 1, "day");
    // Bucket edges in the morning and in the evening: each is counted from the nearer
    // midnight (reporting_repo::NewContactsIn), forwards or backwards.
    ExpectContactsReportMatchesScan(today - 60 * kDay + 3 * 3600, now, "week");
    ExpectContactsReportMatchesScan(today - 60 * kDay + 20 * 3600, now, "day");

    for (auto* svc : {s->lists.get(), s->tags.get()}) {
      bool list = svc->kind() == GroupKind::kList;
      auto page = svc->List("", "", 100);
      ASSERT_TRUE(page);
      for (const auto& grp : page->items) {
        int64_t members = ScanOne(list ? "SELECT COUNT(*) FROM contact_lists WHERE list_id = ? "
                                         "AND state = 'subscribed'"
                                       : "SELECT COUNT(*) FROM contact_tags WHERE tag_id = ?",
                                  {grp.id});
        EXPECT_EQ(grp.member_count, members) << grp.name;
        auto one = svc->Get(Ref{grp.id});
        ASSERT_TRUE(one);
        EXPECT_EQ(one->member_count, members) << grp.name;
      }
    }

    for (int64_t id : campaigns_) {
      auto rep = reports_->CampaignReport(id);
      ASSERT_TRUE(rep) << rep.error().message;
      // The audience as the send would resolve it.
      auto ids = db->Read(
          [&](Conn& c) { return marketing::campaigns_repo::SampleAudience(c, id, 1000000); });
      ASSERT_TRUE(ids);
      EXPECT_EQ((*rep)["audience"]["resolves_now"].get<int64_t>(),
                static_cast<int64_t>(ids->size()))
          << "campaign " << id;
    }
  }

  int64_t MakeCampaign(marketing::Audience audience) {
    auto id = db->Write([&](Conn& c) {
      marketing::Campaign k{.name = "c" + std::to_string(campaigns_.size()),
                            .audience = audience,
                            .created_at = clock.NowUnix(),
                            .updated_at = clock.NowUnix()};
      return marketing::campaigns_repo::Insert(c, k);
    });
    EXPECT_TRUE(id) << id.error().detail;
    campaigns_.push_back(*id);
    return *id;
  }

  std::unique_ptr<marketing::ReportService> reports_;
  std::vector<int64_t> campaigns_;
};

TEST_F(Counters, MixedChangesThroughTheServicesKeepEveryReportEqualToAScan) {
  std::mt19937 rng(12);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const char* kStatuses[] = {"pending", "subscribed", "unsubscribed", "bounced", "complained"};
  std::vector<int64_t> lists;
  for (const char* name : {"news", "customers", "events"}) {
    auto l = s->lists->Create(alice, name, "", "", /*is_public=*/true);
    ASSERT_TRUE(l) << l.error().message;
    lists.push_back(l->id);
  }
  MakeCampaign({.lists = {lists[0]}});
  MakeCampaign({});  // no audience
  std::vector<int64_t> contacts;
  // Contacts over 70 days, a few hours apart, so that days and weeks have edges inside.
  clock.Set(1'760'000'000 - 70 * kDay);
  for (int i = 0; i < 120; ++i) {
    clock.Advance(std::uniform_int_distribution<int64_t>(600, 30 * 3600)(rng));
    ContactInput in;
    in.email = "p" + std::to_string(i) + "@example.com";
    in.status = kStatuses[pick(5)];
    in.type = pick(3) == 0 ? "customer" : "lead";
    in.source = pick(2) == 0 ? "import" : "";
    if (pick(2)) in.lists = {Ref{lists[pick(3)]}};
    if (pick(2)) in.tags = {Ref{std::string(pick(2) ? "vip" : "trial")}};
    auto c = s->contacts->Create(alice, in);
    ASSERT_TRUE(c) << c.error().message;
    contacts.push_back(c->id);
  }
  auto vip = s->tags->Get(Ref{std::string("vip")});
  ASSERT_TRUE(vip);
  MakeCampaign({.tags = {vip->id}});
  MakeCampaign({.lists = {lists[0], lists[1]}, .exclude_tags = {vip->id}});
  // One included group less excluded ones, the excluded side smaller or larger.
  MakeCampaign({.lists = {lists[1]}, .exclude_tags = {vip->id}});
  MakeCampaign({.tags = {vip->id}, .exclude_lists = {lists[0], lists[1], lists[2]}});
  ExpectEveryCounterMatchesScan();

  for (int round = 0; round < 150; ++round) {
    clock.Advance(std::uniform_int_distribution<int64_t>(60, 6 * 3600)(rng));
    int64_t id = contacts[pick(static_cast<int>(contacts.size()))];
    switch (pick(7)) {
      case 0: {  // status through the state machine (with consent where it asks for it)
        auto r = s->contacts->SetStatus(alice, id, kStatuses[pick(5)], true, std::nullopt, "test");
        (void)r;  // a transition the state machine refuses changes nothing
        break;
      }
      case 1: {
        auto cur = s->contacts->Get(id);
        if (!cur) break;
        // The type, only the name (the UPDATE that leaves status and type out), or the
        // status through Update.
        ContactInput in;
        in.first_name = "n" + std::to_string(round);
        if (round % 3 == 0) in.type = cur->type == "lead" ? "customer" : "lead";
        if (round % 3 == 2) {
          in.status = kStatuses[pick(5)];
          in.consent = true;
        }
        auto u = s->contacts->Update(alice, id, cur->revision, in);
        if (round % 3 != 2) {
          ASSERT_TRUE(u) << u.error().message;
        }
        if (u) {
          EXPECT_EQ(u->first_name, in.first_name);
          EXPECT_EQ(u->revision, cur->revision + 1);
          auto again = s->contacts->Get(id);
          ASSERT_TRUE(again);
          EXPECT_EQ(again->first_name, in.first_name);
          EXPECT_EQ(again->type, in.type.value_or(cur->type));
          if (in.status) {
            EXPECT_EQ(again->status, *in.status);
          }
        }
        break;
      }
      case 2:
        ASSERT_TRUE(s->contacts->AddToLists(alice, {id}, {Ref{lists[pick(3)]}}));
        break;
      case 3:
        ASSERT_TRUE(s->contacts->RemoveFromLists(alice, {id}, {Ref{lists[pick(3)]}}));
        break;
      case 4:
        ASSERT_TRUE(s->contacts->AddTags(alice, {id}, {Ref{std::string(pick(2) ? "vip" : "new")}}));
        break;
      case 5:
        ASSERT_TRUE(s->contacts->RemoveTags(alice, {id}, {Ref{std::string("vip")}}));
        break;
      case 6: {  // the preference page: leave a list or join it again
        ListPreferenceChoice choice{.list_id = lists[pick(3)], .subscribed = pick(2) == 0};
        ASSERT_TRUE(s->list_preferences->Set(alice, id, {choice}));
        break;
      }
    }
  }
  ExpectEveryCounterMatchesScan();

  // Deletions: contacts (their memberships go by cascade) and a whole list.
  for (int i = 0; i < 15; ++i) {
    auto k = s->contacts->Get(contacts[i * 7]);
    ASSERT_TRUE(k);
    ASSERT_TRUE(s->contacts->DeleteByEmail(alice, k->email));
  }
  auto deleted = db->Write([&](Conn& c) {
    return s->lists->DeleteAction().execute(c, json{{"id", lists[2]}}, alice);
  });
  ASSERT_TRUE(deleted) << deleted.error().message;
  ExpectEveryCounterMatchesScan();

  // A bulk import whose second item fails: its savepoint is rolled back, the others stay.
  ContactInput ok1, bad, ok2;
  ok1.email = "bulk1@example.com";
  ok1.lists = {Ref{lists[0]}};
  bad.email = "bulk2@example.com";
  bad.lists = {Ref{std::string("no such list")}};
  ok2.email = "bulk3@example.com";
  ok2.status = "unsubscribed";
  ok2.tags = {Ref{std::string("vip")}};
  auto bulk = s->contacts->UpsertBulk(alice, {ok1, bad, ok2});
  ASSERT_TRUE(bulk) << bulk.error().message;
  EXPECT_EQ((*bulk)[1].outcome, "failed");
  EXPECT_EQ((*bulk)[2].outcome, "created");
  ExpectEveryCounterMatchesScan();
  EXPECT_GT(ScanOne("SELECT COUNT(*) FROM contacts"), 100);
}

// On SQLite a transaction's counter adds are gathered and written at its COMMIT
// (Conn::AddTo); the update and delete triggers take a contact out of the counters it was
// in. A contact created and then changed or deleted in the same transaction, with a type,
// status and source no other contact has (rows the triggers would not find yet), is
// counted as it ends up.
TEST_F(Counters, AContactCreatedAndChangedOrDeletedInOneTransactionIsCountedAsItEndsUp) {
  MakeContact("old@example.com");
  auto wrote = db->Write([&](Conn& c) -> Result<int> {
    Contact k{.email = "new1@example.com",
              .status = "bounced",
              .type = "customer",
              .source = "webinar",
              .revision = 1,
              .created_at = clock.NowUnix(),
              .updated_at = clock.NowUnix()};
    auto id = contacts_repo::InsertContact(c, k);
    if (!id) return Fail(id.error());
    k.id = *id;
    Contact next = k;
    next.status = "unsubscribed";
    next.type = "lead";
    next.revision = 2;
    auto u = contacts_repo::UpdateContact(c, next, 1);
    if (!u || !*u) return Fail(Errc::kInternal, "update failed");
    Contact gone{.email = "new2@example.com",
                 .status = "complained",
                 .type = "customer",
                 .source = "fair",
                 .revision = 1,
                 .created_at = clock.NowUnix() - 3 * kDay,
                 .updated_at = clock.NowUnix()};
    auto gid = contacts_repo::InsertContact(c, gone);
    if (!gid) return Fail(gid.error());
    auto d = contacts_repo::DeleteContact(c, *gid);
    if (!d || !*d) return Fail(Errc::kInternal, "delete failed");
    return 0;
  });
  ASSERT_TRUE(wrote) << wrote.error().detail;
  ExpectEveryCounterMatchesScan();
  // No count left for what no contact is (a row at 0 would read the same; there is none).
  EXPECT_EQ(ScanOne("SELECT COUNT(*) FROM contact_totals WHERE n <> 0 AND val IN "
                    "('customer', 'bounced', 'complained')"),
            0);
  EXPECT_EQ(
      ScanOne("SELECT COALESCE(SUM(n), 0) FROM contact_daily WHERE source IN ('webinar', 'fair') "
              "AND status <> 'unsubscribed'"),
      0);
  EXPECT_EQ(ScanOne("SELECT COALESCE(SUM(n), 0) FROM contact_daily WHERE source = 'webinar' "
                    "AND status = 'unsubscribed'"),
            1);
}

TEST_F(Counters, RolledBackWritesLeaveTheCountersUnchanged) {
  auto list = s->lists->Create(alice, "news", "");
  ASSERT_TRUE(list);
  ContactInput in;
  in.lists = {Ref{list->id}};
  in.tags = {Ref{std::string("vip")}};
  Contact a = MakeContact("a@example.com", in);
  MakeContact("b@example.com");
  const std::string before = CounterRows();

  // Each write changes contacts and memberships, then fails: the transaction rolls back.
  auto failed = db->Write([&](Conn& c) -> Result<int> {
    Contact k{.email = "c@example.com",
              .status = "subscribed",
              .type = "customer",
              .source = "api",
              .revision = 1,
              .created_at = clock.NowUnix(),
              .updated_at = clock.NowUnix()};
    auto id = contacts_repo::InsertContact(c, k);
    if (!id) return Fail(id.error());
    if (auto m = contacts_repo::AddMembership(c, false, *id, list->id, 1); !m)
      return Fail(m.error());
    auto cur = contacts_repo::FindContact(c, a.id);
    if (!cur || !*cur) return Fail(Errc::kInternal, "contact a is missing");
    Contact next = **cur;
    next.status = "bounced";
    next.revision += 1;
    if (auto u = contacts_repo::UpdateContact(c, next, (*cur)->revision); !u)
      return Fail(u.error());
    if (auto d = contacts_repo::DeleteContact(c, a.id); !d) return Fail(d.error());
    return Fail(Errc::kInvalidArgument, "rolled back on purpose");
  });
  ASSERT_FALSE(failed);
  EXPECT_EQ(CounterRows(), before);

  // A service write refused half-way (the second contact id does not exist).
  auto refused = s->contacts->AddTags(alice, {a.id, 999999}, {Ref{std::string("trial")}});
  ASSERT_FALSE(refused);
  EXPECT_EQ(CounterRows(), before);

  // And the counters did count the committed writes.
  EXPECT_EQ(ScanOne("SELECT n FROM contact_totals WHERE dim = 'type' AND val = 'lead'"), 2);
  EXPECT_EQ(ScanOne("SELECT SUM(n) FROM group_member_counts WHERE kind = 'list' AND group_id = ?",
                    {list->id}),
            1);
}

}  // namespace
}  // namespace crmd::crm

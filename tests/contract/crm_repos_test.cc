// The crm repositories' contracts, on the engine the suite runs on (SQLite by default;
// PostgreSQL under the `pg.` prefix, see tests/support/test_database.h). Each test opens
// a migrated scratch database and calls one repository inside Database::Write/Read, as a
// service would.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <regex>
#include <string>

#include "src/crm/forms_repo.h"
#include "src/crm/groups_repo.h"
#include "src/crm/outbox_repo.h"
#include "src/governance/api_keys_repo.h"
#include "src/governance/audit_repo.h"
#include "src/governance/confirmations_repo.h"
#include "src/governance/idempotency_repo.h"
#include "src/governance/settings_repo.h"
#include "src/marketing/automations_repo.h"
#include "src/marketing/sequences_repo.h"
#include "src/store/db.h"
#include "tests/support/query_plan.h"
#include "tests/support/test_database.h"
#include "tests/support/test_server.h"

namespace crmd::crm {
namespace {

using crmd::testing::ScratchDatabase;
using crmd::testing::TempDir;
using store::Conn;

class CrmRepos : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<ScratchDatabase>(dir_.path() + "/r.db");
    auto opened = store::Open(scratch_->url(), 4);
    ASSERT_TRUE(opened) << opened.error().message << " " << opened.error().detail;
    db_ = std::move(*opened);
  }

  TempDir dir_;
  std::unique_ptr<ScratchDatabase> scratch_;
  std::unique_ptr<store::Database> db_;
};

// --- lists and tags (groups_repo) ---

TEST_F(CrmRepos, GroupNamesAreUniquePerKind_DuplicateIsAlreadyExists) {
  auto first =
      db_->Write([](Conn& c) { return groups_repo::Insert(c, GroupKind::kList, "News", "", 10); });
  ASSERT_TRUE(first) << first.error().detail;
  auto again =
      db_->Write([](Conn& c) { return groups_repo::Insert(c, GroupKind::kList, "News", "", 11); });
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::kAlreadyExists);
  // The same name as a tag is another kind: allowed.
  auto tag =
      db_->Write([](Conn& c) { return groups_repo::Insert(c, GroupKind::kTag, "News", "", 12); });
  EXPECT_TRUE(tag) << tag.error().detail;
}

TEST_F(CrmRepos, GroupUpdateHonoursRevisionAndNameUniqueness) {
  auto a = db_->Write([](Conn& c) { return groups_repo::Insert(c, GroupKind::kTag, "a", "", 1); });
  auto b = db_->Write([](Conn& c) { return groups_repo::Insert(c, GroupKind::kTag, "b", "", 1); });
  ASSERT_TRUE(a && b);
  auto stale = db_->Write(
      [&](Conn& c) { return groups_repo::Update(c, GroupKind::kTag, *a, "a2", "", 2, 7); });
  ASSERT_TRUE(stale);
  EXPECT_FALSE(*stale);
  auto ok = db_->Write(
      [&](Conn& c) { return groups_repo::Update(c, GroupKind::kTag, *a, "a2", "d", 2, 1); });
  ASSERT_TRUE(ok);
  EXPECT_TRUE(*ok);
  auto g = db_->Read([&](Conn& c) { return groups_repo::Find(c, GroupKind::kTag, *a); });
  ASSERT_TRUE(g && *g);
  EXPECT_EQ((*g)->name, "a2");
  EXPECT_EQ((*g)->revision, 2);
  EXPECT_EQ((*g)->member_count, 0);
  auto taken = db_->Write(
      [&](Conn& c) { return groups_repo::Update(c, GroupKind::kTag, *a, "b", "", 3, 2); });
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().code, Errc::kAlreadyExists);
}

TEST_F(CrmRepos, GroupIdIsNeverReusedAfterDelete) {
  auto a = db_->Write([](Conn& c) { return groups_repo::Insert(c, GroupKind::kList, "x", "", 1); });
  ASSERT_TRUE(a);
  auto del = db_->Write([&](Conn& c) { return groups_repo::Delete(c, GroupKind::kList, *a); });
  ASSERT_TRUE(del);
  auto missing =
      db_->Read([&](Conn& c) { return groups_repo::FindRefById(c, GroupKind::kList, *a); });
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  auto b = db_->Write([](Conn& c) { return groups_repo::Insert(c, GroupKind::kList, "x", "", 2); });
  ASSERT_TRUE(b);
  EXPECT_GT(*b, *a);
}

TEST_F(CrmRepos, GroupListByNameIsAKeysetOnNameWithPrefix) {
  for (const char* n : {"alpha", "beta", "alps", "gamma"})
    ASSERT_TRUE(
        db_->Write([&](Conn& c) { return groups_repo::Insert(c, GroupKind::kList, n, "", 1); }));
  auto page =
      db_->Read([](Conn& c) { return groups_repo::ListByName(c, GroupKind::kList, "", "al", 10); });
  ASSERT_TRUE(page);
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].name, "alpha");
  EXPECT_EQ((*page)[1].name, "alps");
  auto next = db_->Read(
      [](Conn& c) { return groups_repo::ListByName(c, GroupKind::kList, "alpha", "", 10); });
  ASSERT_TRUE(next);
  ASSERT_EQ(next->size(), 3u);
  EXPECT_EQ((*next)[0].name, "alps");
}

// --- settings ---

TEST_F(CrmRepos, SettingsUpdateOnlyAtTheExpectedRevision) {
  auto cur = db_->Read([](Conn& c) { return governance::settings_repo::Find(c); });
  ASSERT_TRUE(cur && *cur);  // the migration writes the row
  const int64_t rev = (*cur)->revision;
  auto stale = db_->Write(
      [&](Conn& c) { return governance::settings_repo::Update(c, "{}", rev + 1, 5, rev + 7); });
  ASSERT_TRUE(stale);
  EXPECT_FALSE(*stale);
  auto ok = db_->Write([&](Conn& c) {
    return governance::settings_repo::Update(c, R"({"double_opt_in":true})", rev + 1, 5, rev);
  });
  ASSERT_TRUE(ok);
  EXPECT_TRUE(*ok);
  auto again = db_->Write(
      [&](Conn& c) { return governance::settings_repo::Update(c, "{}", rev + 1, 6, rev); });
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again) << "the second writer at the old revision must lose";
  auto now = db_->Read([](Conn& c) { return governance::settings_repo::Find(c); });
  ASSERT_TRUE(now && *now);
  EXPECT_EQ((*now)->revision, rev + 1);
  EXPECT_EQ((*now)->document, R"({"double_opt_in":true})");
}

// --- confirmations ---

governance::confirmations_repo::NewConfirmation Pending(const std::string& hash,
                                                        int64_t expires_at) {
  return {.token_hash = hash,
          .action = "delete_list",
          .scope = "lists:delete",
          .client_id = "c",
          .subject = "u",
          .args = "{}",
          .args_hash = "h",
          .revisions = "{}",
          .preview = "{}",
          .created_at = 100,
          .expires_at = expires_at};
}

TEST_F(CrmRepos, ConfirmationIsSingleUseThroughTheConditionalUpdate) {
  auto id = db_->Write(
      [](Conn& c) { return governance::confirmations_repo::Insert(c, Pending("t1", 1000)); });
  ASSERT_TRUE(id) << id.error().detail;
  auto found =
      db_->Read([](Conn& c) { return governance::confirmations_repo::FindByTokenHash(c, "t1"); });
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->id, *id);
  EXPECT_EQ((*found)->status, "pending");
  auto first =
      db_->Write([&](Conn& c) { return governance::confirmations_repo::MarkUsed(c, *id, 200); });
  ASSERT_TRUE(first);
  EXPECT_TRUE(*first);
  auto second =
      db_->Write([&](Conn& c) { return governance::confirmations_repo::MarkUsed(c, *id, 201); });
  ASSERT_TRUE(second);
  EXPECT_FALSE(*second);
  auto approve = db_->Write(
      [&](Conn& c) { return governance::confirmations_repo::Approve(c, *id, "cli:x", 202); });
  ASSERT_TRUE(approve);
  EXPECT_FALSE(*approve) << "a used confirmation cannot be approved";
}

TEST_F(CrmRepos, ConfirmationTokenHashIsUniqueAndUnknownHashIsAbsent) {
  ASSERT_TRUE(db_->Write(
      [](Conn& c) { return governance::confirmations_repo::Insert(c, Pending("dup", 1000)); }));
  auto again = db_->Write(
      [](Conn& c) { return governance::confirmations_repo::Insert(c, Pending("dup", 1000)); });
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::kAlreadyExists);
  auto none =
      db_->Read([](Conn& c) { return governance::confirmations_repo::FindByTokenHash(c, "nope"); });
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  auto info =
      db_->Read([](Conn& c) { return governance::confirmations_repo::FindInfo(c, 987654); });
  ASSERT_TRUE(info);
  EXPECT_FALSE(*info);
}

TEST_F(CrmRepos, ConfirmationApproveOnlyPendingUnexpiredAndExpireStale) {
  auto live = db_->Write(
      [](Conn& c) { return governance::confirmations_repo::Insert(c, Pending("live", 1000)); });
  auto old = db_->Write(
      [](Conn& c) { return governance::confirmations_repo::Insert(c, Pending("old", 150)); });
  ASSERT_TRUE(live && old);
  auto late = db_->Write(
      [&](Conn& c) { return governance::confirmations_repo::Approve(c, *old, "cli:x", 200); });
  ASSERT_TRUE(late);
  EXPECT_FALSE(*late);
  auto ok = db_->Write(
      [&](Conn& c) { return governance::confirmations_repo::Approve(c, *live, "cli:x", 200); });
  ASSERT_TRUE(ok);
  EXPECT_TRUE(*ok);
  auto expired =
      db_->Write([](Conn& c) { return governance::confirmations_repo::ExpireStale(c, 200); });
  ASSERT_TRUE(expired);
  EXPECT_EQ(*expired, 1);
  auto info = db_->Read([&](Conn& c) { return governance::confirmations_repo::FindInfo(c, *old); });
  ASSERT_TRUE(info && *info);
  EXPECT_EQ((*info)->status, "expired");
  // Approved rows can still be used once.
  auto used =
      db_->Write([&](Conn& c) { return governance::confirmations_repo::MarkUsed(c, *live, 300); });
  ASSERT_TRUE(used);
  EXPECT_TRUE(*used);
}

// --- outbox ---

TEST_F(CrmRepos, OutboxIdsIncreaseAndAfterIsOldestFirst) {
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(db_->Write([&](Conn& c) {
      return outbox_repo::Insert(c, "contact.created", 10 + i, R"({"n":)" + std::to_string(i) + "}",
                                 100 + i);
    }));
  auto all = db_->Read([](Conn& c) { return outbox_repo::After(c, 0, 10); });
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_LT((*all)[0].id, (*all)[1].id);
  EXPECT_LT((*all)[1].id, (*all)[2].id);
  EXPECT_EQ((*all)[2].data["n"], 2);
  auto tail = db_->Read([&](Conn& c) { return outbox_repo::StoredAfter(c, (*all)[0].id, 1); });
  ASSERT_TRUE(tail);
  ASSERT_EQ(tail->size(), 1u);
  EXPECT_EQ((*tail)[0].id, (*all)[1].id);
  EXPECT_EQ((*tail)[0].contact_id, 11);
}

TEST_F(CrmRepos, OutboxCursorStartsAtZeroAndAdvances) {
  auto before = db_->Read([](Conn& c) { return outbox_repo::CursorPosition(c, "t"); });
  ASSERT_TRUE(before);
  EXPECT_EQ(*before, 0);
  auto st = db_->Write([](Conn& c) -> Status {
    if (auto s = outbox_repo::EnsureCursor(c, "t"); !s) return s;
    if (auto s = outbox_repo::EnsureCursor(c, "t"); !s) return s;  // idempotent
    return outbox_repo::AdvanceCursor(c, "t", 42);
  });
  ASSERT_TRUE(st) << st.error().detail;
  auto after = db_->Read([](Conn& c) { return outbox_repo::CursorPosition(c, "t"); });
  ASSERT_TRUE(after);
  EXPECT_EQ(*after, 42);
}

// --- audit ---

TEST_F(CrmRepos, AuditRecentIsNewestFirstAndKeepsEveryField) {
  const governance::Actor actor{.kind = "cli", .subject = "s", .client_id = "", .request_id = "r"};
  ASSERT_TRUE(db_->Write([&](Conn& c) {
    return governance::audit_repo::Insert(
        c, 1, actor, {.action = "a1", .target_type = "list", .target_ids = {1, 2}});
  }));
  ASSERT_TRUE(db_->Write([&](Conn& c) {
    return governance::audit_repo::Insert(
        c, 2, governance::Actor{},
        {.action = "a2", .target_type = "tag", .revision_before = 3, .revision_after = 4});
  }));
  auto recent = db_->Read([](Conn& c) { return governance::audit_repo::Recent(c, 10); });
  ASSERT_TRUE(recent);
  ASSERT_EQ(recent->size(), 2u);
  EXPECT_EQ((*recent)[0].entry.action, "a2");
  EXPECT_EQ((*recent)[0].actor.kind, "system");
  EXPECT_EQ((*recent)[0].entry.revision_after, 4);
  EXPECT_EQ((*recent)[1].entry.target_ids, (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE((*recent)[1].entry.revision_before);
  auto one = db_->Read([](Conn& c) { return governance::audit_repo::Recent(c, 1); });
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), 1u);
}

TEST_F(CrmRepos, AuditByAppSeeksItsIndexAndLastActivityIsItsLatestEntry) {
  const governance::Actor a{.kind = "oauth", .subject = "u", .client_id = "app-a"};
  const governance::Actor b{.kind = "oauth", .subject = "u", .client_id = "app-b"};
  const governance::Actor cli{.kind = "cli", .subject = "s"};
  int64_t at = 0;
  for (const governance::Actor* who : {&a, &b, &a, &cli, &a}) {
    at += 10;
    ASSERT_TRUE(db_->Write(
        [&](Conn& c) { return governance::audit_repo::Insert(c, at, *who, {.action = "x"}); }));
  }
  auto last = db_->Read([](Conn& c) {
    return governance::audit_repo::LastActivityByClient(c, {"app-a", "app-b", "app-gone", ""});
  });
  ASSERT_TRUE(last) << last.error().detail;
  EXPECT_EQ(*last, (std::map<std::string, int64_t>{{"app-a", 50}, {"app-b", 20}}));
  auto found = db_->Read(
      [](Conn& c) { return governance::audit_repo::Find(c, {.client_id = "app-a", .limit = 2}); });
  ASSERT_TRUE(found);
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].occurred_at, 50);
  EXPECT_EQ((*found)[1].occurred_at, 30);

  // Both read only the app's end of audit_log_client, never the whole log, and need no sort.
  const bool pg = db_->dialect() == store::Dialect::kPostgres;
  auto [find_sql, find_params] =
      governance::audit_repo::FindSql({.client_id = "app-a", .limit = 2});
  const std::vector<std::pair<std::string, std::vector<store::Value>>> queries = {
      {governance::audit_repo::kLastActivitySql, {std::string("app-a")}}, {find_sql, find_params}};
  for (const auto& [sql, params] : queries) {
    auto plan = crmd::testing::QueryPlanText(*db_, sql, params);
    ASSERT_TRUE(plan) << plan.error().detail;
    const std::string& text = *plan;
    EXPECT_NE(text.find("audit_log_client"), std::string::npos) << sql << "\n" << text;
    if (pg) {
      EXPECT_EQ(text.find("Seq Scan"), std::string::npos) << sql << "\n" << text;
      EXPECT_EQ(text.find("Sort"), std::string::npos) << sql << "\n" << text;
    } else {
      EXPECT_EQ(text.find("SCAN audit_log\n"), std::string::npos) << sql << "\n" << text;
      EXPECT_EQ(text.find("TEMP B-TREE"), std::string::npos) << sql << "\n" << text;
    }
  }
}

// --- API keys ---

TEST_F(CrmRepos, ApiKeyPrefixIsUniqueAndIdsAreNotReused) {
  auto a = db_->Write([](Conn& c) {
    return governance::api_keys_repo::Insert(c, "k", "crmd_live_aaaaaaaa", "h1",
                                             governance::ApiKeyRole::kAdmin, 5);
  });
  ASSERT_TRUE(a) << a.error().detail;
  auto dup = db_->Write([](Conn& c) {
    return governance::api_keys_repo::Insert(c, "k2", "crmd_live_aaaaaaaa", "h2",
                                             governance::ApiKeyRole::kIntegration, 5);
  });
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
  auto found = db_->Read(
      [](Conn& c) { return governance::api_keys_repo::FindByPrefix(c, "crmd_live_aaaaaaaa"); });
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->secret_hash, "h1");
  EXPECT_EQ((*found)->key.role, governance::ApiKeyRole::kAdmin);
  EXPECT_TRUE((*found)->key.enabled);
  auto del = db_->Write([&](Conn& c) { return governance::api_keys_repo::Delete(c, *a); });
  ASSERT_TRUE(del && *del);
  auto del2 = db_->Write([&](Conn& c) { return governance::api_keys_repo::Delete(c, *a); });
  ASSERT_TRUE(del2);
  EXPECT_FALSE(*del2);
  auto b = db_->Write([](Conn& c) {
    return governance::api_keys_repo::Insert(c, "k", "crmd_live_bbbbbbbb", "h3",
                                             governance::ApiKeyRole::kIntegration, 6);
  });
  ASSERT_TRUE(b);
  EXPECT_GT(*b, *a);
}

TEST_F(CrmRepos, ApiKeyEnableAndTouchLastUsed) {
  auto missing =
      db_->Write([](Conn& c) { return governance::api_keys_repo::SetEnabled(c, 999, false); });
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  auto id = db_->Write([](Conn& c) {
    return governance::api_keys_repo::Insert(c, "k", "crmd_live_cccccccc", "h",
                                             governance::ApiKeyRole::kIntegration, 5);
  });
  ASSERT_TRUE(id);
  auto off =
      db_->Write([&](Conn& c) { return governance::api_keys_repo::SetEnabled(c, *id, false); });
  ASSERT_TRUE(off && *off);
  ASSERT_TRUE(db_->Write(
      [&](Conn& c) { return governance::api_keys_repo::TouchLastUsed(c, *id, 1000, 60); }));
  ASSERT_TRUE(db_->Write(
      [&](Conn& c) { return governance::api_keys_repo::TouchLastUsed(c, *id, 1030, 60); }));
  auto k = db_->Read([&](Conn& c) { return governance::api_keys_repo::Find(c, *id); });
  ASSERT_TRUE(k && *k);
  EXPECT_FALSE((*k)->enabled);
  EXPECT_EQ((*k)->last_used_at, 1000) << "within the resolution the first touch stands";
}

// --- sequences and automations ---

TEST_F(CrmRepos, SequenceUpdateHonoursRevisionAndListFiltersByStatus) {
  marketing::Sequence s{.name = "Welcome", .created_at = 1, .updated_at = 1};
  auto id = db_->Write([&](Conn& c) { return marketing::sequences_repo::Insert(c, s); });
  ASSERT_TRUE(id) << id.error().detail;
  auto loaded = db_->Read([&](Conn& c) { return marketing::sequences_repo::Find(c, *id); });
  ASSERT_TRUE(loaded && *loaded);
  marketing::Sequence cur = **loaded;
  EXPECT_EQ(cur.revision, 1);
  cur.status = marketing::SequenceStatus::kPaused;
  auto ok = db_->Write([&](Conn& c) { return marketing::sequences_repo::Update(c, cur); });
  ASSERT_TRUE(ok && *ok);
  auto stale = db_->Write(
      [&](Conn& c) { return marketing::sequences_repo::Update(c, cur); });  // still revision 1
  ASSERT_TRUE(stale);
  EXPECT_FALSE(*stale);
  auto drafts = db_->Read([](Conn& c) {
    return marketing::sequences_repo::ListAfter(c, 0, marketing::SequenceStatus::kDraft, 10);
  });
  ASSERT_TRUE(drafts);
  EXPECT_TRUE(drafts->empty());
  auto paused = db_->Read([](Conn& c) {
    return marketing::sequences_repo::ListAfter(c, 0, marketing::SequenceStatus::kPaused, 10);
  });
  ASSERT_TRUE(paused);
  ASSERT_EQ(paused->size(), 1u);
  EXPECT_EQ((*paused)[0].revision, 2);
  auto taken =
      db_->Read([](Conn& c) { return marketing::sequences_repo::NameTaken(c, "Welcome"); });
  auto free = db_->Read([](Conn& c) { return marketing::sequences_repo::NameTaken(c, "Other"); });
  ASSERT_TRUE(taken && free);
  EXPECT_TRUE(*taken);
  EXPECT_FALSE(*free);
  auto none = db_->Read([](Conn& c) { return marketing::sequences_repo::Find(c, 424242); });
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST_F(CrmRepos, AutomationRoundTripsRevisionCheckAndIdNotReused) {
  marketing::Automation a{.name = "On tag",
                          .trigger = {{"type", "tag_added"}, {"tag_id", 1}},
                          .steps = nlohmann::json::array(),
                          .created_at = 1,
                          .updated_at = 1};
  auto id = db_->Write([&](Conn& c) { return marketing::automations_repo::Insert(c, a); });
  ASSERT_TRUE(id) << id.error().detail;
  auto loaded = db_->Read([&](Conn& c) { return marketing::automations_repo::Find(c, *id); });
  ASSERT_TRUE(loaded && *loaded);
  EXPECT_EQ((*loaded)->trigger["type"], "tag_added");
  EXPECT_EQ((*loaded)->trigger["tag_id"], 1);
  EXPECT_TRUE(marketing::automations_repo::StateBasedTrigger((*loaded)->trigger));
  EXPECT_FALSE(marketing::automations_repo::StateBasedTrigger({{"type", "contact_created"}}));
  auto stale =
      db_->Write([&](Conn& c) { return marketing::automations_repo::Update(c, **loaded, 5); });
  ASSERT_TRUE(stale);
  EXPECT_FALSE(*stale);
  auto ok =
      db_->Write([&](Conn& c) { return marketing::automations_repo::Update(c, **loaded, 1); });
  ASSERT_TRUE(ok && *ok);
  auto candidates = db_->Read([&](Conn& c) {
    return marketing::automations_repo::CountCandidates(c, *id, (*loaded)->trigger);
  });
  ASSERT_TRUE(candidates);
  EXPECT_EQ(*candidates, 0);
  auto taken =
      db_->Read([](Conn& c) { return marketing::automations_repo::NameTaken(c, "On tag"); });
  ASSERT_TRUE(taken);
  EXPECT_TRUE(*taken);
  ASSERT_TRUE(db_->Write([&](Conn& c) { return marketing::automations_repo::Delete(c, *id); }));
  auto next = db_->Write([&](Conn& c) { return marketing::automations_repo::Insert(c, a); });
  ASSERT_TRUE(next);
  EXPECT_GT(*next, *id);
}

// --- forms ---

TEST_F(CrmRepos, FormRoundTripsAndMissingRowsSayFalse) {
  forms_repo::FormColumns f{.name = "Signup",
                            .fields = "[]",
                            .applies = "{}",
                            .display_rules = "{}",
                            .require_key = true,
                            .allowed_origins = R"(["https://a.example"])",
                            .honeypot_field = ""};
  const std::string pub = "frm_" + std::string(32, 'a');
  auto id = db_->Write([&](Conn& c) { return forms_repo::Insert(c, f, pub, 7); });
  ASSERT_TRUE(id) << id.error().detail;
  auto row = db_->Read([&](Conn& c) { return forms_repo::Find(c, *id); });
  ASSERT_TRUE(row && *row);
  EXPECT_EQ((*row)->public_id, pub);
  EXPECT_EQ((*row)->columns.name, "Signup");
  EXPECT_TRUE((*row)->columns.require_key);
  EXPECT_EQ((*row)->columns.honeypot_field, "");
  EXPECT_EQ((*row)->created_at, 7);
  auto counted = db_->Write([&](Conn& c) { return forms_repo::CountSubmission(c, *id); });
  ASSERT_TRUE(counted && *counted);
  auto gone = db_->Write([](Conn& c) { return forms_repo::CountSubmission(c, 999); });
  ASSERT_TRUE(gone);
  EXPECT_FALSE(*gone);
  auto upd = db_->Write([](Conn& c) { return forms_repo::Update(c, 999, {}, 8); });
  ASSERT_TRUE(upd);
  EXPECT_FALSE(*upd);
  auto del = db_->Write([&](Conn& c) { return forms_repo::Delete(c, *id); });
  ASSERT_TRUE(del && *del);
  auto again = db_->Write([&](Conn& c) { return forms_repo::Insert(c, f, pub, 9); });
  ASSERT_TRUE(again);
  EXPECT_GT(*again, *id);
}

TEST_F(CrmRepos, FormsAreFoundByTheirUniquePublicId) {
  forms_repo::FormColumns f{.name = "Public",
                            .fields = "[]",
                            .applies = "{}",
                            .display_rules = "{}",
                            .allowed_origins = "[]"};
  const std::string a = "frm_" + std::string(32, 'b');
  const std::string b = "frm_" + std::string(32, 'c');
  auto first = db_->Write([&](Conn& c) { return forms_repo::Insert(c, f, a, 1); });
  ASSERT_TRUE(first) << first.error().detail;
  auto second = db_->Write([&](Conn& c) { return forms_repo::Insert(c, f, b, 1); });
  ASSERT_TRUE(second) << second.error().detail;
  auto found = db_->Read([&](Conn& c) { return forms_repo::FindByPublicId(c, b); });
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->id, *second);
  EXPECT_EQ((*found)->public_id, b);
  EXPECT_EQ((*found)->columns.name, "Public");
  // An update keeps the public id.
  f.name = "Renamed";
  ASSERT_TRUE(db_->Write([&](Conn& c) { return forms_repo::Update(c, *second, f, 2); }));
  auto renamed = db_->Read([&](Conn& c) { return forms_repo::FindByPublicId(c, b); });
  ASSERT_TRUE(renamed && *renamed);
  EXPECT_EQ((*renamed)->columns.name, "Renamed");
  auto none = db_->Read(
      [&](Conn& c) { return forms_repo::FindByPublicId(c, "frm_" + std::string(32, 'd')); });
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  // The numeric id is not a public id.
  auto numeric =
      db_->Read([&](Conn& c) { return forms_repo::FindByPublicId(c, std::to_string(*second)); });
  ASSERT_TRUE(numeric);
  EXPECT_FALSE(*numeric);
  // Two forms never share one.
  auto twin = db_->Write([&](Conn& c) { return forms_repo::Insert(c, f, a, 3); });
  EXPECT_FALSE(twin);
}

TEST_F(CrmRepos, FormsFromBeforePublicIdsGetADistinctOneWhenMigrated) {
  // Back to the schema before migration 0070, with two forms in it.
  ASSERT_TRUE(db_->Write([](Conn& c) -> Status {
    for (const char* sql : {"DROP INDEX forms_public_id", "ALTER TABLE forms DROP COLUMN public_id",
                            "DELETE FROM schema_migrations WHERE version = 70"}) {
      auto r = c.Exec(sql);
      if (!r) return Fail(r.error());
    }
    for (const char* name : {"Old one", "Old two"}) {
      auto r = c.Exec("INSERT INTO forms (id, name, created_at, updated_at) VALUES (" +
                          store::NextIdSql("forms") + ", ?, 1, 1)",
                      {std::string(name)});
      if (!r) return Fail(r.error());
    }
    return Ok();
  }));
  auto applied = store::Migrate(*db_);
  ASSERT_TRUE(applied) << applied.error().detail;
  EXPECT_EQ(*applied, 1);
  auto rows = db_->Read([](Conn& c) { return forms_repo::List(c); });
  ASSERT_TRUE(rows && rows->size() == 2);
  const std::regex shape("^frm_[0-9a-f]{32}$");
  EXPECT_TRUE(std::regex_match((*rows)[0].public_id, shape)) << (*rows)[0].public_id;
  EXPECT_TRUE(std::regex_match((*rows)[1].public_id, shape)) << (*rows)[1].public_id;
  EXPECT_NE((*rows)[0].public_id, (*rows)[1].public_id);
}

// --- idempotency ---

TEST_F(CrmRepos, IdempotencyKeepsAnswerWithinWindowAndReplacesExpiredRow) {
  ASSERT_TRUE(db_->Write([](Conn& c) {
    return governance::idempotency_repo::Remember(c, "s", "k", {{"id", 1}}, 100);
  }));
  auto hit = db_->Read([](Conn& c) { return governance::idempotency_repo::Find(c, "s", "k", 50); });
  ASSERT_TRUE(hit && *hit);
  EXPECT_EQ((**hit)["id"], 1);
  auto other_scope =
      db_->Read([](Conn& c) { return governance::idempotency_repo::Find(c, "t", "k", 50); });
  ASSERT_TRUE(other_scope);
  EXPECT_FALSE(*other_scope);
  auto expired =
      db_->Read([](Conn& c) { return governance::idempotency_repo::Find(c, "s", "k", 100); });
  ASSERT_TRUE(expired);
  EXPECT_FALSE(*expired);
  ASSERT_TRUE(db_->Write([](Conn& c) {
    return governance::idempotency_repo::Remember(c, "s", "k", {{"id", 2}}, 200);
  }));
  auto replaced =
      db_->Read([](Conn& c) { return governance::idempotency_repo::Find(c, "s", "k", 150); });
  ASSERT_TRUE(replaced && *replaced);
  EXPECT_EQ((**replaced)["id"], 2);
  auto swept =
      db_->Write([](Conn& c) { return governance::idempotency_repo::DeleteCreatedBefore(c, 200); });
  ASSERT_TRUE(swept);
  EXPECT_EQ(*swept, 1);
}

}  // namespace
}  // namespace crmd::crm

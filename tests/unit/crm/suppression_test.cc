// The suppression list (src/crm/suppression.h) and the contact service's use of it, on
// SQLite and PostgreSQL: what enters an entry, what it refuses, what lifts it, and that no
// entry keeps an address in clear.
#include <gtest/gtest.h>

#include "src/core/crypto.h"
#include "src/crm/contacts_repo.h"
#include "tests/unit/crm/fixture.h"

namespace crmd::crm::testing {
namespace {

class SuppressionList : public CrmFixture {
 protected:
  std::optional<Suppression> Entry(const std::string& email) {
    auto hit = s->suppressions->Check(email);
    EXPECT_TRUE(hit) << hit.error().message;
    return hit ? *hit : std::nullopt;
  }
  int64_t Rows(const std::string& sql, const std::vector<store::Value>& params = {}) {
    auto n = db->Read([&](store::Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne(sql, params);
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    });
    return n.value_or(-1);
  }
};

TEST_F(SuppressionList, AddressesAreKeptAsAKeyedHashOfTheNormalisedAddress) {
  EXPECT_EQ(s->suppressions->AddressHash("ada@example.com"),
            crypto::Hex(crypto::HmacSha256(kSuppressionKey, "ada@example.com")));
  EXPECT_NE(s->suppressions->AddressHash("ada@example.com"), crypto::Sha256Hex("ada@example.com"));
  auto added = s->suppressions->Add(alice, {.email = " Ada@EXAMPLE.com", .source = "x"});
  ASSERT_TRUE(added) << added.error().message;
  EXPECT_TRUE(added->created);
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM suppressions WHERE address_hash = ?",
                 {s->suppressions->AddressHash("ada@example.com")}),
            1);
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM suppressions WHERE source LIKE '%ada%' OR "
                 "address_hash LIKE '%ada%' OR domain IS NOT NULL"),
            0);
  ASSERT_TRUE(Entry("ADA@example.com"));
  EXPECT_EQ(Entry("ADA@example.com")->reason, "manual");
  EXPECT_FALSE(Entry("bob@example.com"));
}

TEST_F(SuppressionList, ADomainMatchesItsAddressesOnly) {
  ASSERT_TRUE(s->suppressions->Add(
      alice, SuppressionInputFromText("@Spam.Example.org", "manual", "console")));
  ASSERT_TRUE(Entry("x@spam.example.org"));
  EXPECT_TRUE(Entry("x@spam.example.org")->is_domain());
  EXPECT_FALSE(Entry("x@sub.spam.example.org"));
  EXPECT_FALSE(Entry("x@example.org"));
  auto again = s->suppressions->Add(alice, {.domain = "spam.example.org"});
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->created);
  auto bad = s->suppressions->Add(alice, {.domain = "localhost"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::kInvalidArgument);
  auto reason = s->suppressions->Add(alice, {.email = "a@example.org", .reason = "spam"});
  ASSERT_FALSE(reason);
  EXPECT_EQ(reason.error().code, Errc::kInvalidArgument);
}

TEST_F(SuppressionList, StatusesEnterTheAddressAndTheStrongerReasonWins) {
  Contact c = MakeContact("a@example.com");
  EXPECT_FALSE(Entry("a@example.com"));
  ASSERT_TRUE(s->contacts->SetStatus(alice, c.id, "unsubscribed", false, std::nullopt, "asked"));
  ASSERT_TRUE(Entry("a@example.com"));
  EXPECT_EQ(Entry("a@example.com")->reason, "unsubscribed");
  EXPECT_EQ(Entry("a@example.com")->contact_id, c.id);
  ASSERT_TRUE(s->contacts->SetStatus(alice, c.id, "complained", false, std::nullopt,
                                     "550 <a@example.com> complained"));
  auto e = Entry("a@example.com");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reason, "complaint");
  EXPECT_EQ(e->source.find("a@example.com"), std::string::npos) << e->source;
  EXPECT_NE(e->source.find("<address>"), std::string::npos) << e->source;
  ContactInput bounced{.email = "b@example.com", .status = "bounced"};
  ASSERT_TRUE(s->contacts->Create(alice, bounced));
  EXPECT_EQ(Entry("b@example.com")->reason, "hard_bounce");
}

TEST_F(SuppressionList, DeletionKeepsTheEntryAndNoPathResubscribesTheAddress) {
  Contact c = MakeContact("gone@example.com");
  ASSERT_TRUE(s->contacts->SetStatus(alice, c.id, "complained", false, std::nullopt));
  ASSERT_TRUE(s->contacts->DeleteByEmail(alice, "gone@example.com"));
  auto e = Entry("gone@example.com");
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->contact_id);  // the contact is erased; the entry stays

  ContactInput in{.email = "gone@example.com", .status = "subscribed"};
  auto created = s->contacts->Create(alice, in);
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().code, Errc::kSuppressed);
  auto upserted = s->contacts->Upsert(alice, {.email = "gone@example.com"});
  ASSERT_FALSE(upserted);
  EXPECT_EQ(upserted.error().code, Errc::kSuppressed);
  auto bulk = s->contacts->UpsertBulk(alice, {in, {.email = "new@example.com"}});
  ASSERT_TRUE(bulk);
  EXPECT_EQ((*bulk)[0].outcome, "failed");
  EXPECT_EQ((*bulk)[0].error->code, Errc::kSuppressed);
  EXPECT_EQ((*bulk)[1].outcome, "created");
  // Not subscribed is allowed, and the entry then points at the contact again.
  auto kept = s->contacts->Create(alice, {.email = "gone@example.com", .status = "unsubscribed"});
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_EQ(Entry("gone@example.com")->contact_id, kept->id);
  auto moved = s->contacts->Update(alice, kept->id, kept->revision,
                                   {.status = "subscribed", .consent = true});
  ASSERT_FALSE(moved);
  EXPECT_EQ(moved.error().code, Errc::kSuppressed);
  // A subscribed contact does not take a suppressed address as its new one.
  Contact other = MakeContact("other@example.com");
  auto renamed = s->contacts->Update(alice, other.id, other.revision, {.email = "x@y.org"});
  ASSERT_TRUE(renamed);
  ASSERT_TRUE(s->suppressions->Add(alice, {.email = "z@y.org"}));
  auto taken = s->contacts->Update(alice, other.id, renamed->revision, {.email = "z@y.org"});
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().code, Errc::kSuppressed);
}

TEST_F(SuppressionList, ASignupIsHeldPendingAndItsConfirmationLiftsTheEntry) {
  ASSERT_TRUE(s->suppressions->Add(alice, {.email = "back@example.com", .reason = "complaint"}));
  ContactInput signup{.email = "back@example.com", .source = "form:1", .signup = true};
  auto created = s->contacts->Upsert(alice, signup);
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_EQ(created->contact.status, "pending");
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM optin_emails WHERE contact_id = ?", {created->contact.id}),
            1);
  auto confirmed = s->contacts->ConfirmOptIn(created->contact.id, "r9");
  ASSERT_TRUE(confirmed) << confirmed.error().message;
  EXPECT_EQ(confirmed->status, "subscribed");
  EXPECT_FALSE(Entry("back@example.com"));
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM audit_log WHERE action = 'lift_suppression'"), 1);

  // A domain's entry no confirmation lifts.
  ASSERT_TRUE(s->suppressions->Add(alice, {.domain = "closed.example.org"}));
  auto refused = s->contacts->Upsert(alice, {.email = "p@closed.example.org", .signup = true});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::kSuppressed);
}

TEST_F(SuppressionList, RemovalIsAuditedAndPagesWalkEveryEntry) {
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(s->suppressions->Add(alice, {.email = "p" + std::to_string(i) + "@example.com"}));
  std::vector<int64_t> seen;
  std::string cursor;
  do {
    auto page = s->suppressions->List({}, cursor, 2);
    ASSERT_TRUE(page) << page.error().message;
    for (const auto& e : page->items) seen.push_back(e.entry.id);
    cursor = page->next_cursor.value_or("");
  } while (!cursor.empty());
  ASSERT_EQ(seen.size(), 5u);
  ASSERT_TRUE(s->suppressions->Remove(bob, seen[0]));
  auto twice = s->suppressions->Remove(bob, seen[0]);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, Errc::kNotFound);
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM audit_log WHERE action = 'remove_suppression' AND "
                 "subject = 'user-bob'"),
            1);
  EXPECT_FALSE(Entry("p0@example.com"));
}

TEST_F(SuppressionList, BackfillEntersContactsOlderThanTheList) {
  Contact c = MakeContact("old@example.com");
  // As a contact unsubscribed before migration 0071 was: the status alone, no entry.
  ASSERT_TRUE(db->Write([&](store::Conn& conn) -> Status {
    if (auto st = conn.Exec("UPDATE contacts SET status = 'unsubscribed' WHERE id = ?", {c.id});
        !st)
      return Fail(st.error());
    return Discard(conn.Exec("INSERT INTO suppression_backfill (contact_id) VALUES (?)", {c.id}));
  }));
  EXPECT_FALSE(Entry("old@example.com"));
  auto n = s->suppressions->Backfill(1);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(Entry("old@example.com")->reason, "unsubscribed");
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM suppression_backfill"), 0);
  EXPECT_EQ(*s->suppressions->Backfill(), 0);
}

}  // namespace
}  // namespace crmd::crm::testing

// marketing::ContactHistory over a migrated database whose rows are written directly: the
// audit rows about a contact are found by the exact id in target_ids (not 15 for 5), each
// status change names the audit row that says the same change, and the timeline pages
// most recent first, every entry once, with cursors that only it makes.
#include "src/marketing/contact_history.h"

#include <set>

#include "tests/unit/marketing/fixture.h"

namespace crmd::crm::testing {
namespace {

using nlohmann::json;

constexpr int64_t kT = 1'760'000'000;

class ContactHistoryTest : public MarketingDb {
 protected:
  void SetUp() override {
    MarketingDb::SetUp();
    contacts_ =
        std::make_unique<ContactService>(ContactServiceOptions{.db = db_.get(), .clock = &clock_});
    history_ = std::make_unique<marketing::ContactHistory>(marketing::ContactHistoryOptions{
        .db = db_.get(), .clock = &clock_, .contacts = contacts_.get()});
  }
  void Event(int64_t contact, const std::string& type, const json& data, int64_t at) {
    Exec(
        "INSERT INTO outbox_events (event_type, contact_id, data, occurred_at) VALUES (?, ?, ?, ?)",
        {type, contact, data.dump(), at});
  }
  void Audit(const std::string& kind, const std::string& action, const std::string& ids,
             const json& details, int64_t at, std::optional<int64_t> revision_before = 1) {
    Exec(
        "INSERT INTO audit_log (occurred_at, actor_kind, subject, client_id, action, target_type, "
        "target_ids, revision_before, details) VALUES (?, ?, 's', '', ?, 'contact', ?, ?, ?)",
        {at, kind, action, ids,
         revision_before ? store::Value(*revision_before) : store::Value(nullptr), details.dump()});
  }

  std::unique_ptr<ContactService> contacts_;
  std::unique_ptr<marketing::ContactHistory> history_;
};

TEST_F(ContactHistoryTest, AuditRowsAreThoseNamingTheContactsExactId) {
  for (int i = 1; i < 5; ++i) AddContact("filler" + std::to_string(i) + "@example.com");
  int64_t id = AddContact("five@example.com");
  ASSERT_EQ(id, 5);
  Audit("oauth", "a", "[5]", json::object(), kT);
  Audit("oauth", "b", "[1,5]", json::object(), kT);
  Audit("oauth", "c", "[5,9]", json::object(), kT);
  Audit("oauth", "d", "[1,5,9]", json::object(), kT);
  for (const char* other : {"[15]", "[51]", "[1,55]", "[50,6]", "[]"})
    Audit("oauth", "other", other, json::object(), kT);
  auto doc = history_->Export(id);
  ASSERT_TRUE(doc) << doc.error().message;
  std::vector<std::string> actions;
  for (const auto& a : (*doc)["audit"]) actions.push_back(a["action"]);
  EXPECT_EQ(actions, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST_F(ContactHistoryTest, EachStatusChangeNamesTheAuditRowThatSaysIt) {
  int64_t id = AddContact("ann@example.com", "unsubscribed");
  const std::string ids = "[" + std::to_string(id) + "]";
  // All in one second: the creation, a name change (no status), a move by the console, a
  // move by an assistant.
  Event(id, "contact.created", {{"status", "pending"}}, kT);
  Audit("api_key", "create_contact", ids, json::object(), kT, std::nullopt);
  Audit("user", "update_contact", ids, {{"status_changed", false}}, kT);
  Event(id, "contact.status_updated", {{"from", "pending"}, {"to", "subscribed"}}, kT);
  Audit("user", "update_contact", ids, {{"status_changed", true}}, kT);
  Event(id, "contact.status_updated", {{"from", "subscribed"}, {"to", "unsubscribed"}}, kT + 1);
  Audit("oauth", "set_contact_status", ids, {{"from", "subscribed"}, {"to", "unsubscribed"}},
        kT + 1);
  auto doc = history_->Export(id);
  ASSERT_TRUE(doc) << doc.error().message;
  const json& changes = (*doc)["status_changes"];
  ASSERT_EQ(changes.size(), 3u) << changes.dump();
  EXPECT_TRUE(changes[0]["from"].is_null());
  EXPECT_EQ(changes[0]["by"]["face"], "rest");
  EXPECT_EQ(changes[0]["by"]["action"], "create_contact");
  EXPECT_EQ(changes[1]["by"]["face"], "console");
  EXPECT_EQ(changes[1]["by"]["action"], "update_contact");
  EXPECT_NE(changes[1]["by"]["audit_id"], changes[0]["by"]["audit_id"]);
  EXPECT_EQ(changes[2]["by"]["face"], "mcp");
  EXPECT_EQ(changes[2]["to"], "unsubscribed");
  // No audit row says a change made by an import run without events: by is null.
  Event(id, "contact.status_updated", {{"from", "unsubscribed"}, {"to", "subscribed"}}, kT + 50);
  doc = history_->Export(id);
  ASSERT_TRUE(doc);
  EXPECT_TRUE((*doc)["status_changes"][3]["by"].is_null());
}

TEST_F(ContactHistoryTest, TheTimelinePagesMostRecentFirstWithEveryEntryOnce) {
  int64_t id = AddContact("bea@example.com");
  const std::string ids = "[" + std::to_string(id) + "]";
  int64_t campaign = Insert(
      "INSERT INTO campaigns (name, subject, created_at, updated_at) VALUES ('Spring', 'Hi', 0, 0) "
      "RETURNING id",
      {});
  Exec(
      "INSERT INTO campaign_recipients (campaign_id, contact_id, status, updated_at, message_id, "
      "sent_at, opened_at, clicked_at) VALUES (?, ?, 'sent', ?, '<m1@example.com>', ?, ?, ?)",
      {campaign, id, kT + 10, kT + 10, kT + 20, kT + 30});
  for (int i = 0; i < 4; ++i) {
    Event(id, "contact.updated", {{"i", i}}, kT + 10);  // ties with the message
    Audit("oauth", "update_contact", ids, {{"status_changed", false}}, kT + 10);
  }
  std::vector<json> items;
  std::set<std::string> seen;
  std::string cursor;
  for (int pages = 0; pages < 20; ++pages) {
    auto page = history_->Timeline(id, cursor, 3);
    ASSERT_TRUE(page) << page.error().message;
    EXPECT_LE(page->items.size(), 3u);
    for (const auto& it : page->items) {
      items.push_back(it);
      EXPECT_TRUE(seen.insert(it.dump()).second) << "twice: " << it.dump();
    }
    if (!page->next_cursor) break;
    cursor = *page->next_cursor;
  }
  ASSERT_EQ(items.size(), 11u);  // 4 events, 4 audit rows, a message, an open, a click
  EXPECT_EQ(items[0]["kind"], "click");
  EXPECT_EQ(items[1]["kind"], "open");
  for (size_t i = 1; i < items.size(); ++i)
    EXPECT_GE(items[i - 1]["at"].get<std::string>(), items[i]["at"].get<std::string>());
  auto all = history_->Timeline(id, "", 100);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->items.size(), 11u);
  EXPECT_FALSE(all->next_cursor.has_value());
  for (const char* bad : {"x", "1.2", "1.2.3.4", "a.b.c", "1.2.3x", "-1.2.3", "1..3"}) {
    auto r = history_->Timeline(id, bad, 10);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument) << bad;
  }
  auto missing = history_->Timeline(id + 100, "", 10);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Errc::kNotFound);
}

TEST(ContactHistoryFaces, ActorKindsNameTheFaces) {
  EXPECT_EQ(marketing::FaceOfActor("oauth"), "mcp");
  EXPECT_EQ(marketing::FaceOfActor("api_key"), "rest");
  EXPECT_EQ(marketing::FaceOfActor("cli"), "crmctl");
  EXPECT_EQ(marketing::FaceOfActor("user"), "console");
  EXPECT_EQ(marketing::FaceOfActor("form"), "form");
  EXPECT_EQ(marketing::FaceOfActor("system"), "system");
}

}  // namespace
}  // namespace crmd::crm::testing

#include "src/crm/contacts.h"

#include <gtest/gtest.h>

#include "src/core/json_write.h"
#include "src/crm/contacts_repo.h"
#include "src/crm/events.h"
#include "tests/support/query_plan.h"
#include "tests/unit/crm/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;
using testing::CrmFixture;

class Contacts : public CrmFixture {};

std::vector<std::string> Types(const std::vector<OutboxEvent>& ev) {
  std::vector<std::string> t;
  for (const auto& e : ev) t.push_back(e.event_type);
  return t;
}

TEST_F(Contacts, CreateNormalisesEmailAndEmitsCreatedAndMembershipEvents) {
  ContactInput in;
  in.first_name = "Jane";
  in.tags = {Ref{std::string("vip")}};
  auto l = s->lists->Create(alice, "Newsletter", "");
  ASSERT_TRUE(l);
  in.lists = {Ref{l->id}};
  Contact c = MakeContact("  Jane@Example.com ", in);
  EXPECT_EQ(c.email, "jane@example.com");
  EXPECT_EQ(c.status, "subscribed");
  EXPECT_EQ(c.revision, 1);
  ASSERT_EQ(c.tags.size(), 1u);
  EXPECT_EQ(c.tags[0].name, "vip");
  ASSERT_EQ(c.lists.size(), 1u);
  EXPECT_EQ(Types(Events()), (std::vector<std::string>{"contact.created", "contact.tag_added",
                                                       "contact.list_added"}));
}

TEST_F(Contacts, DuplicateEmailIsRefusedWhateverTheCase) {
  MakeContact("a@example.com");
  ContactInput in;
  in.email = "A@EXAMPLE.com";
  auto r = s->contacts->Create(alice, in);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kAlreadyExists);
}

// A create is inserted straight away; a taken email inserts nothing (no event, no audit
// entry, no counter) and the refusal names the contact that holds it. The transaction
// stays usable on both engines: the next create takes the next id.
TEST_F(Contacts, ADuplicateNamesTheHolderOfTheEmailAndWritesNothing) {
  Contact first = MakeContact("a@example.com");
  int64_t last_event = LastEventId();
  ContactInput in;
  in.email = "A@Example.COM";
  in.first_name = "Other";
  in.tags = {Ref{std::string("vip")}};
  auto r = s->contacts->Create(alice, in);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kAlreadyExists);
  EXPECT_NE(r.error().message.find("(id " + std::to_string(first.id) + ")"), std::string::npos)
      << r.error().message;
  EXPECT_TRUE(Events(last_event).empty());
  Contact next = MakeContact("b@example.com");
  EXPECT_EQ(next.id, first.id + 1);
  auto counted = db->Read([](store::Conn& c) -> Result<std::vector<int64_t>> {
    std::vector<int64_t> n;
    for (const char* sql :
         {"SELECT n FROM contact_totals WHERE dim = 'status' AND val = 'subscribed'",
          "SELECT COUNT(*) FROM audit_log WHERE action = 'create_contact'",
          "SELECT COUNT(*) FROM tags"}) {
      auto row = c.QueryOne(sql);
      if (!row) return Fail(row.error());
      n.push_back(*row ? (*row)->Int(0) : -1);
    }
    return n;
  });
  ASSERT_TRUE(counted) << counted.error().detail;
  EXPECT_EQ(*counted, (std::vector<int64_t>{2, 2, 0}));
}

// A taken email is the answer before any other refusal of the input, whether the input
// check (a name too long) or the insert (custom_fields not an object) would refuse it; a
// free email gets the input's own refusal.
TEST_F(Contacts, ATakenEmailIsTheAnswerBeforeAnyOtherRefusalOfTheInput) {
  Contact first = MakeContact("taken@example.com");
  ContactInput long_name;
  long_name.first_name = std::string(300, 'x');
  ContactInput bad_fields;
  bad_fields.custom_fields = json::array();
  for (ContactInput in : {long_name, bad_fields}) {
    in.email = "Taken@example.com";
    auto r = s->contacts->Create(alice, in);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::kAlreadyExists) << r.error().message;
    EXPECT_NE(r.error().message.find("(id " + std::to_string(first.id) + ")"), std::string::npos)
        << r.error().message;
    in.email = "free@example.com";
    auto free = s->contacts->Create(alice, in);
    ASSERT_FALSE(free);
    EXPECT_EQ(free.error().code, Errc::kInvalidArgument) << free.error().message;
  }
}

TEST_F(Contacts, InvalidEmailIsRefusedBeforeAnyWrite) {
  ContactInput in;
  in.email = "not-an-email";
  auto r = s->contacts->Create(alice, in);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  EXPECT_TRUE(Events().empty());
}

TEST_F(Contacts, DnsModeFromSettingsAppliesOnCreate) {
  auto st = s->governance.settings->Get();
  ASSERT_TRUE(st);
  ASSERT_TRUE(
      s->governance.settings->Update(alice, st->revision, {{"email_validation_mode", "dns"}}));
  ContactInput in;
  in.email = "a@nowhere.example";  // fake resolver: NXDOMAIN
  auto r = s->contacts->Create(alice, in);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("dns:no_such_domain"), std::string::npos);
  resolver.answers["nowhere.example"] = {.domain_exists = true, .has_mx = true};
  EXPECT_TRUE(s->contacts->Create(alice, in));
}

TEST_F(Contacts, DoubleOptInMakesNewContactsPending) {
  auto st = s->governance.settings->Get();
  ASSERT_TRUE(s->governance.settings->Update(alice, st->revision, {{"double_opt_in", true}}));
  EXPECT_EQ(MakeContact("p@example.com").status, "pending");
}

TEST_F(Contacts, UpdateNeedsCurrentRevision) {
  Contact c = MakeContact("a@example.com");
  ContactInput in;
  in.first_name = "Ann";
  auto r = s->contacts->Update(alice, c.id, c.revision, in);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->revision, 2);
  in.first_name = "Anna";
  auto stale = s->contacts->Update(alice, c.id, c.revision, in);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code, Errc::kRevisionConflict);
  auto ev = Events();
  EXPECT_EQ(ev.back().event_type, "contact.updated");
  EXPECT_EQ(ev.back().data["changes"]["first_name"]["to"], "Ann");
}

TEST_F(Contacts, CustomFieldsMergeDeleteAndCap) {
  ContactInput in;
  in.custom_fields = json{{"plan", "pro"}, {"seats", 3}};
  Contact c = MakeContact("a@example.com", in);
  ContactInput up;
  up.custom_fields = json{{"plan", nullptr}, {"region", "eu"}};
  auto r = s->contacts->Update(alice, c.id, c.revision, up);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->custom_fields, (json{{"seats", 3}, {"region", "eu"}}));
  ContactInput big;
  json many = json::object();
  for (int i = 0; i < 51; ++i) many["k" + std::to_string(i)] = i;
  big.custom_fields = many;
  auto refused = s->contacts->Update(alice, c.id, r->revision, big);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::kInvalidArgument);
}

TEST_F(Contacts, StatusChangesGoThroughTheMachineAndEmitStatusUpdated) {
  Contact c = MakeContact("a@example.com");
  auto u = s->contacts->SetStatus(alice, c.id, "unsubscribed", false, std::nullopt);
  ASSERT_TRUE(u);
  EXPECT_EQ(Events().back().event_type, "contact.status_updated");
  auto back = s->contacts->SetStatus(alice, c.id, "subscribed", false, std::nullopt);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().code, Errc::kInvalidTransition);
  // The unsubscribe put the address on the suppression list: consent given to an assistant
  // does not lift it; once an administrator removes the entry, consent is enough again.
  auto consented = s->contacts->SetStatus(alice, c.id, "subscribed", true, std::nullopt);
  ASSERT_FALSE(consented);
  EXPECT_EQ(consented.error().code, Errc::kSuppressed);
  auto entry = s->suppressions->Check("a@example.com");
  ASSERT_TRUE(entry && *entry);
  ASSERT_TRUE(s->suppressions->Remove(alice, (*entry)->id));
  EXPECT_TRUE(s->contacts->SetStatus(alice, c.id, "subscribed", true, std::nullopt));
}

TEST_F(Contacts, UpsertUsesTheSameStatusMachine) {
  Contact c = MakeContact("a@example.com");
  ASSERT_TRUE(s->contacts->SetStatus(alice, c.id, "bounced", false, std::nullopt));
  ContactInput in;
  in.email = "a@example.com";
  in.status = "subscribed";
  in.consent = true;
  auto r = s->contacts->Upsert(alice, in);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kInvalidTransition);
}

TEST_F(Contacts, SameStatusIsNoOpWithoutEvent) {
  Contact c = MakeContact("a@example.com");
  int64_t last = LastEventId();
  auto r = s->contacts->SetStatus(alice, c.id, "subscribed", false, std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->revision, c.revision);
  EXPECT_TRUE(Events(last).empty());
}

TEST_F(Contacts, MembershipChangesOnlyEmitRealChanges) {
  Contact a = MakeContact("a@example.com");
  Contact b = MakeContact("b@example.com");
  int64_t last = LastEventId();
  auto r = s->contacts->AddTags(alice, {a.id, b.id}, {Ref{std::string("hot")}});
  ASSERT_TRUE(r);
  EXPECT_EQ(Events(last).size(), 2u);
  last = LastEventId();
  auto again = s->contacts->AddTags(alice, {a.id}, {Ref{std::string("hot")}});
  ASSERT_TRUE(again);
  EXPECT_TRUE((*again)[0].changed.empty());
  EXPECT_TRUE(Events(last).empty());
  auto rm = s->contacts->RemoveTags(alice, {a.id}, {Ref{std::string("hot")}});
  ASSERT_TRUE(rm);
  EXPECT_EQ(Events(last).back().event_type, "contact.tag_removed");
  auto unknown_list = s->contacts->AddToLists(alice, {a.id}, {Ref{std::string("nope")}});
  ASSERT_FALSE(unknown_list);
  EXPECT_EQ(unknown_list.error().code, Errc::kNotFound);
}

TEST_F(Contacts, BulkUpsertReportsPerItemInOneTransaction) {
  MakeContact("existing@example.com");
  std::vector<ContactInput> items(3);
  items[0].email = "new@example.com";
  items[1].email = "broken";
  items[2].email = "existing@example.com";
  items[2].first_name = "Ex";
  auto r = s->contacts->UpsertBulk(alice, items);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].outcome, "created");
  EXPECT_EQ((*r)[1].outcome, "failed");
  EXPECT_EQ((*r)[1].error->code, Errc::kInvalidArgument);
  EXPECT_EQ((*r)[2].outcome, "updated");
  EXPECT_TRUE(s->contacts->GetByEmail("new@example.com"));
}

TEST_F(Contacts, BulkFailedItemLeavesNoPartialWrites) {
  std::vector<ContactInput> items(1);
  items[0].email = "x@example.com";
  items[0].tags = {Ref{std::string("fine")}};
  items[0].lists = {Ref{std::string("missing-list")}};  // fails after the insert
  auto r = s->contacts->UpsertBulk(alice, items);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0].outcome, "failed");
  EXPECT_FALSE(s->contacts->GetByEmail("x@example.com"));
  EXPECT_TRUE(Events().empty());
}

TEST_F(Contacts, IdempotencyKeyReturnsFirstResultWithin24Hours) {
  ContactInput in;
  in.email = "i@example.com";
  auto first = s->contacts->Create(alice, in, "key-1");
  ASSERT_TRUE(first);
  auto again = s->contacts->Create(alice, in, "key-1");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->id, first->id);
  auto other_client_try = s->contacts->Create(other_client, in, "key-1");
  EXPECT_FALSE(other_client_try);  // not the same client: a real (duplicate) create
  clock.Advance(governance::kIdempotencyWindowSeconds + 1);
  EXPECT_FALSE(s->contacts->Create(alice, in, "key-1"));
}

TEST_F(Contacts, ListFiltersAndPaginates) {
  for (int i = 0; i < 7; ++i) {
    ContactInput in;
    in.type = i % 2 ? "customer" : "lead";
    in.last_name = i < 3 ? "Smith" : "Jones";
    if (i < 2) in.tags = {Ref{std::string("t")}};
    MakeContact("c" + std::to_string(i) + "@example.com", in);
    clock.Advance(100);
  }
  auto page1 = s->contacts->List({}, "", 3);
  ASSERT_TRUE(page1);
  EXPECT_EQ(page1->items.size(), 3u);
  ASSERT_TRUE(page1->next_cursor);
  auto page2 = s->contacts->List({}, *page1->next_cursor, 3);
  ASSERT_TRUE(page2);
  EXPECT_GT(page2->items[0].id, page1->items[2].id);
  auto page3 = s->contacts->List({}, *page2->next_cursor, 3);
  ASSERT_TRUE(page3);
  EXPECT_EQ(page3->items.size(), 1u);
  EXPECT_FALSE(page3->next_cursor);

  EXPECT_EQ(s->contacts->List({.type = "customer"}, "", 100)->items.size(), 3u);
  EXPECT_EQ(s->contacts->List({.tag = Ref{std::string("t")}}, "", 100)->items.size(), 2u);
  EXPECT_EQ(s->contacts->List({.query = "smi"}, "", 100)->items.size(), 3u);
  EXPECT_EQ(s->contacts->List({.query = "C1@"}, "", 100)->items.size(), 1u);
  EXPECT_EQ(s->contacts->List({.created_from = 1'760'000'200}, "", 100)->items.size(), 5u);
  EXPECT_FALSE(s->contacts->List({}, "garbage!", 10));
  EXPECT_FALSE(s->contacts->List({.tag = Ref{std::string("nope")}}, "", 10));
}

TEST_F(Contacts, BothPrefixQueryShapesAnswerTheSamePages) {
  // The shape for a rare prefix (indexed ranges unioned, then sorted) and the one for a
  // common prefix (contacts in id order, each tested) must page identically.
  const char* names[] = {"Smith", "smirnov", "Jones", "Smart", "Osmith", "SMIT"};
  for (int i = 0; i < 12; ++i) {
    ContactInput in;
    in.first_name = i % 3 ? "Ann" : "Smilla";
    in.last_name = names[i % 6];
    MakeContact((i == 4 ? "smx" : "k") + std::to_string(i) + "@example.com", in);
  }
  auto page = [&](ContactFilter f, bool common, int64_t after) {
    contacts_repo::ResolvedFilter rf{.filter = &f, .query_is_common = common};
    auto [sql, params] = contacts_repo::ListContactsSql(rf, after, 3);
    auto rows = db->Read([&](store::Conn& c) { return c.Query(sql, params); });
    EXPECT_TRUE(rows) << rows.error().detail;
    std::vector<int64_t> ids;
    if (rows)
      for (const auto& r : *rows) ids.push_back(r.Int(0));
    return ids;
  };
  for (ContactFilter f :
       {ContactFilter{.query = "smi"}, ContactFilter{.query = "SM"},
        ContactFilter{.type = "lead", .query = "a"}, ContactFilter{.query = "zz"}}) {
    int64_t after = 0;
    size_t total = 0;
    for (int guard = 0; guard < 10; ++guard) {
      auto rare = page(f, false, after);
      EXPECT_EQ(page(f, true, after), rare) << *f.query << " after " << after;
      total += rare.size();
      if (rare.size() < 3) break;
      after = rare.back();
    }
    if (*f.query == "smi") {
      EXPECT_EQ(total, 8u);  // contacts 0, 1, 3, 5, 6, 7, 9 and 11
    }
  }
  auto common = db->Read([](store::Conn& c) { return contacts_repo::QueryIsCommon(c, "k"); });
  ASSERT_TRUE(common);
  EXPECT_FALSE(*common);  // 11 matches, far below kCommonQueryMatches
}

TEST_F(Contacts, EveryListFilterUsesAnIndex) {
  std::vector<ContactFilter> filters = {{.status = "subscribed"},
                                        {.type = "lead"},
                                        {.source = "mcp"},
                                        {.query = "ab"},
                                        {.created_from = 1, .created_to = 2}};
  std::vector<contacts_repo::ResolvedFilter> resolved;
  for (auto& f : filters) resolved.push_back({.filter = &f});
  ContactFilter none;
  resolved.push_back({.filter = &none, .tag_id = 1});
  resolved.push_back({.filter = &none, .list_id = 1});
  // A prefix most contacts match walks contacts in id order (the primary key).
  ContactFilter common{.query = "ab"};
  resolved.push_back({.filter = &common, .query_is_common = true});
  for (const auto& rf : resolved) {
    auto [sql, params] = contacts_repo::ListContactsSql(rf, 0, 26);
    const bool pg = db->dialect() == store::Dialect::kPostgres;
    auto plan = crmd::testing::QueryPlanText(*db, sql, params);
    ASSERT_TRUE(plan) << plan.error().detail;
    const std::string& text = *plan;
    if (pg) {
      EXPECT_EQ(text.find("Seq Scan on contacts"), std::string::npos) << sql << "\n" << text;
      EXPECT_NE(text.find("Index"), std::string::npos) << sql << "\n" << text;
      continue;
    }
    EXPECT_EQ(text.find("SCAN c\n"), std::string::npos) << sql << "\n" << text;
    EXPECT_EQ(text.find("SCAN contacts"), std::string::npos) << sql << "\n" << text;
    EXPECT_NE(text.find(rf.query_is_common ? "PRIMARY KEY" : "INDEX"), std::string::npos)
        << sql << "\n"
        << text;
    // A membership filter walks its (group, contact) index in contact order: the page
    // needs no sort of every member.
    if (rf.tag_id || rf.list_id) {
      EXPECT_EQ(text.find("TEMP B-TREE"), std::string::npos) << sql << "\n" << text;
    }
  }
}

TEST_F(Contacts, DeleteByEmailEmitsDeletedAndRemovesMemberships) {
  ContactInput in;
  in.tags = {Ref{std::string("t")}};
  Contact c = MakeContact("d@example.com", in);
  auto r = s->contacts->DeleteByEmail(alice, "D@example.com");
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["deleted_count"], 1);
  EXPECT_EQ(Events().back().event_type, "contact.deleted");
  EXPECT_EQ(Events().back().contact_id, c.id);
  auto t = s->tags->Get(Ref{std::string("t")});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->member_count, 0);
}

TEST_F(Contacts, WritesAreAudited) {
  Contact c = MakeContact("a@example.com");
  ContactInput in;
  in.phone = "+1 555";
  ASSERT_TRUE(s->contacts->Update(bob, c.id, c.revision, in));
  auto rows = db->Read([&](store::Conn& conn) { return s->governance.audit->Recent(conn, 10); });
  ASSERT_TRUE(rows);
  ASSERT_GE(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].entry.action, "update_contact");
  EXPECT_EQ((*rows)[0].actor.subject, "user-bob");
  EXPECT_EQ((*rows)[0].actor.client_id, "client-a");
  EXPECT_EQ((*rows)[0].entry.revision_before, 1);
  EXPECT_EQ((*rows)[0].entry.revision_after, 2);
}

// Get reads the contact and its memberships in one statement (no transaction around it):
// the same contact, tags and lists, each sorted by name, as the two-statement read gives.
TEST_F(Contacts, GetInOneStatementReadsWhatTheTransactionReads) {
  std::vector<int64_t> lists;
  for (const char* name : {"Zeta list", "alpha list", "Mid list"}) {
    auto l = s->lists->Create(alice, name, "");
    ASSERT_TRUE(l) << name;
    lists.push_back(l->id);
  }
  ContactInput in;
  in.first_name = "Ann \"Q\"";
  in.custom_fields = json{{"plan", "pro"}, {"n", 2}};
  in.tags = {Ref{std::string("zebra")}, Ref{std::string("Apple")}, Ref{std::string("mango")}};
  in.lists = {Ref{lists[0]}, Ref{lists[1]}, Ref{lists[2]}};
  Contact full = MakeContact("ann@example.com", in);
  Contact bare = MakeContact("bob@example.com", ContactInput{});
  for (const Contact* c : {&full, &bare}) {
    auto one = s->contacts->Get(c->id);
    ASSERT_TRUE(one) << one.error().message;
    auto two = db->Read([&](store::Conn& conn) { return s->contacts->GetIn(conn, c->id); });
    ASSERT_TRUE(two) << two.error().message;
    EXPECT_EQ(ToJson(*one), ToJson(*two)) << c->email;
  }
  auto one = s->contacts->Get(full.id);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->tags.size(), 3u);
  ASSERT_EQ(one->lists.size(), 3u);
  // Tags and lists each in the byte order of their names, by id and by email alike.
  auto names = [](const std::vector<NamedRef>& refs) {
    std::vector<std::string> out;
    for (const auto& r : refs) out.push_back(r.name);
    return out;
  };
  const std::vector<std::string> tag_order{"Apple", "mango", "zebra"};
  const std::vector<std::string> list_order{"Mid list", "Zeta list", "alpha list"};
  EXPECT_EQ(names(one->tags), tag_order);
  EXPECT_EQ(names(one->lists), list_order);
  auto by_email = s->contacts->GetByEmail("ann@example.com");
  ASSERT_TRUE(by_email) << by_email.error().message;
  EXPECT_EQ(names(by_email->tags), tag_order);
  EXPECT_EQ(names(by_email->lists), list_order);
  EXPECT_EQ(one->custom_fields, json({{"plan", "pro"}, {"n", 2}}));
  EXPECT_EQ(one->first_name, "Ann \"Q\"");
  EXPECT_TRUE(s->contacts->Get(bare.id)->tags.empty());
  auto missing = s->contacts->Get(bare.id + 1000);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Errc::kNotFound);
}

// AppendJson writes the bytes of DumpJson(ToJson(c)) without the tree (get_contact's
// answer), for contacts of every shape.
TEST(ContactJson, AppendJsonWritesWhatToJsonSerialises) {
  std::vector<crm::Contact> contacts;
  crm::Contact plain;
  plain.id = 1;
  plain.email = "a@example.com";
  plain.status = "subscribed";
  plain.type = "lead";
  plain.revision = 1;
  contacts.push_back(plain);
  crm::Contact full = plain;
  full.id = 9007199254740993;
  full.first_name = "Zo\xc3\xab \"Q\"";
  full.last_name = "O'Brien\\\n\t";
  full.phone = "+1 555 0100";
  full.source = "form:7";
  full.revision = 123456;
  full.created_at = 1764201600;
  full.updated_at = 253402300799;  // 9999-12-31T23:59:59Z
  full.custom_fields = {
      {"plan", "pro"}, {"n", 3}, {"nested", {{"a", {1, 2, nullptr}}, {"b", 0.5}}}};
  full.tags = {{1, "vip"}, {22, "caf\xc3\xa9"}, {3, "q\"t"}};
  full.lists = {{5, "Newsletter"}};
  contacts.push_back(full);
  crm::Contact bad = full;
  bad.first_name = "bad \xff utf-8";
  bad.tags = {{4, "cut \xe2\x82"}};
  bad.custom_fields = {{"k", "\xc0\xaf"}};
  contacts.push_back(bad);
  for (const auto& c : contacts) {
    for (bool compact : {false, true}) {
      std::string out = "{\"contact\":";
      crm::AppendJson(out, c, compact);
      out.push_back('}');
      EXPECT_EQ(
          out, DumpJson(json{{"contact", crm::ToJson(c, compact)}}, json::error_handler_t::replace))
          << c.id << (compact ? " compact" : " full");
    }
    // A contact.created event's data: the compact form with its source, as it was built
    // and dumped before it was written directly.
    std::string event;
    crm::AppendJson(event, c, /*compact=*/true, /*with_source=*/true);
    json before = crm::ToJson(c, true);
    before["source"] = c.source;
    EXPECT_EQ(event, DumpJson(before, json::error_handler_t::replace)) << c.id;
    if (c.id == full.id) {
      EXPECT_NE(event.find("\"source\":\"form:7\""), std::string::npos) << event;
    }
  }
}

}  // namespace
}  // namespace crmd::crm

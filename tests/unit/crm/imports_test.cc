// Contact imports through ImportService, on each engine: outcomes per row, the rules that
// never bend, options, refusals of bad files, and resuming after a lost worker.
#include "src/crm/imports.h"

#include <cstring>
#include <map>
#include <memory>

#include "src/crm/contacts_export.h"
#include "src/crm/lists.h"
#include "tests/unit/crm/fixture.h"

namespace crmd::crm {
namespace {

using testing::CrmFixture;

ByteSource Text(const std::string& text) {
  auto pos = std::make_shared<size_t>(0);
  return [text, pos](char* buf, size_t n) {
    size_t k = std::min(n, text.size() - *pos);
    std::memcpy(buf, text.data() + *pos, k);
    *pos += k;
    return k;
  };
}

struct ImportFixture : CrmFixture {
  governance::Actor cli{.kind = "cli", .subject = "ops"};

  ImportOptions Options(std::vector<std::pair<std::string, std::string>> params) {
    auto o = ParseImportOptions(params);
    EXPECT_TRUE(o) << (o ? "" : o.error().message);
    return o ? *o : ImportOptions{};
  }
  ImportJob Run(const std::string& csv, const ImportOptions& o = {}) {
    auto job = s->imports->Create(cli, o, Text(csv), "test");
    EXPECT_TRUE(job) << (job ? "" : job.error().message);
    if (!job) return {};
    auto done = s->imports->RunToEnd(job->id, "test", nullptr);
    EXPECT_TRUE(done) << (done ? "" : done.error().message);
    return done ? *done : ImportJob{};
  }
  Contact ByEmail(const std::string& email) {
    auto c = s->contacts->GetByEmail(email);
    EXPECT_TRUE(c) << email;
    return c ? *c : Contact{};
  }
  void MakeList(const std::string& name) {
    auto l = s->lists->Create(alice, name, "");
    ASSERT_TRUE(l) << l.error().message;
  }
};

TEST_F(ImportFixture, EachRowsOutcomeIsCountedAndBadRowsAreReportedWithTheirLine) {
  MakeContact("same@example.com", {.first_name = std::string("Same")});
  MakeContact("old@example.com", {.first_name = std::string("Old")});
  std::string csv =
      "Email,First_Name,last_name,status,plan\n"   // line 1
      "new@example.com,Nora,New,,gold\n"           // 2 created
      "old@example.com,Olga,,,\n"                  // 3 updated
      "same@example.com,Same,,,\n"                 // 4 unchanged
      "not-an-address,X,,,\n"                      // 5 invalid
      "x@example.com,X,,married,\n"                // 6 invalid: unknown status
      "\"multi@example.com\",\"two\nlines\",,,\n"  // 7 created (spans 7-8)
      "long@example.com," +
      std::string(300, 'a') +
      ",,,\n"          // 9 invalid: too long
      ",nobody,,,\n";  // 10 invalid: no email
  ImportJob j = Run(csv);
  EXPECT_EQ(j.status, "done");
  EXPECT_EQ(j.rows_total, 8);
  EXPECT_EQ(j.counts.rows_done, 8);
  EXPECT_EQ(j.counts.created, 2);
  EXPECT_EQ(j.counts.updated, 1);
  EXPECT_EQ(j.counts.unchanged, 1);
  EXPECT_EQ(j.counts.invalid, 4);
  Contact n = ByEmail("new@example.com");
  EXPECT_EQ(n.first_name, "Nora");
  EXPECT_EQ(n.custom_fields["plan"], "gold");
  EXPECT_EQ(n.status, "pending");  // the default for new contacts without consent
  EXPECT_EQ(ByEmail("old@example.com").first_name, "Olga");
  EXPECT_EQ(ByEmail("multi@example.com").first_name, "two\nlines");
  auto errors = s->imports->ErrorsCsv(j.id);
  ASSERT_TRUE(errors);
  EXPECT_EQ(errors->substr(0, 19), "line,email,reason\r\n");
  EXPECT_NE(errors->find("5,not-an-address,bad address"), std::string::npos) << *errors;
  EXPECT_NE(errors->find("6,x@example.com,\"status must be"), std::string::npos) << *errors;
  EXPECT_NE(errors->find("9,long@example.com,first_name is too long"), std::string::npos)
      << *errors;
  EXPECT_NE(errors->find("10,,no email"), std::string::npos) << *errors;
}

TEST_F(ImportFixture, RowsTotalCountsTheRecordsTheReaderReads) {
  // A stray quote inside an unquoted field is text; doubled quotes and a line break inside
  // a quoted field stay in their record; blank lines are no records.
  auto job = s->imports->Create(
      cli, {}, Text("email,n\nst\"ray@example.com,\"a\"\"b\"\n\nq@example.com,\"x\r\ny\"\r\n\r\n"));
  ASSERT_TRUE(job) << job.error().message;
  EXPECT_EQ(job->rows_total, 2);
  auto done = s->imports->RunToEnd(job->id, "test", nullptr);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->counts.rows_done, 2);
}

TEST_F(ImportFixture, NeverMakesAnExistingContactSubscribedAndAnEmptyCellKeepsTheField) {
  Contact u = MakeContact("gone@example.com", {.first_name = std::string("Gone"),
                                               .status = std::string("unsubscribed")});
  ImportJob j = Run("email,first_name,status,phone\ngone@example.com,,subscribed,+1 555\n",
                    Options({{"status", "subscribed"}, {"consent", "signed up at the fair"}}));
  EXPECT_EQ(j.counts.updated, 1);
  Contact after = ByEmail("gone@example.com");
  EXPECT_EQ(after.status, "unsubscribed");
  EXPECT_EQ(after.first_name, "Gone");
  EXPECT_EQ(after.phone, "+1 555");
}

TEST_F(ImportFixture, SubscribedNeedsAConsentNoteAndThenCreatesSubscribedContacts) {
  auto refused = ParseImportOptions({{"status", "subscribed"}});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("consent"), std::string::npos);
  ImportJob j = Run("email\na@example.com\n",
                    Options({{"status", "subscribed"}, {"consent", "paper forms 2019"}}));
  EXPECT_EQ(j.counts.created, 1);
  Contact a = ByEmail("a@example.com");
  EXPECT_EQ(a.status, "subscribed");
  EXPECT_EQ(a.source, "import:" + std::to_string(j.id));
  auto stored = s->imports->Get(j.id);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->options.consent, "paper forms 2019");
}

TEST_F(ImportFixture, PendingSendsTheDoubleOptInEmailOnlyWhenItIsOn) {
  auto optins = [&] {
    auto n =
        db->Read([](store::Conn& c) { return c.QueryOne("SELECT COUNT(*) FROM optin_emails"); });
    return n && *n ? (**n).Int(0) : -1;
  };
  ImportJob off = Run("email\noff@example.com\n");
  EXPECT_EQ(off.counts.created, 1);
  EXPECT_EQ(ByEmail("off@example.com").status, "pending");
  EXPECT_EQ(optins(), 0);
  UpdateSettings({{"double_opt_in", true}});
  ImportJob on = Run("email\non@example.com\n");
  EXPECT_EQ(on.counts.created, 1);
  EXPECT_EQ(ByEmail("on@example.com").status, "pending");
  EXPECT_EQ(optins(), 1);
}

TEST_F(ImportFixture, ExistingSkipListsTagsAndTheMapOption) {
  MakeList("Newsletter");
  MakeContact("kept@example.com", {.first_name = std::string("Kept")});
  ImportJob j =
      Run("E-mail;Vorname;Gruppen;Notes\n"
          "kept@example.com;Changed;vip|press;x\n"
          "fresh@example.com;Fritz;vip|press;y\n",
          Options({{"existing", "skip"},
                   {"list", "Newsletter"},
                   {"tag", "imported"},
                   {"map", "E-mail=email,Vorname=first_name,Gruppen=tags,Notes=-"}}));
  EXPECT_EQ(j.delimiter, ";");
  EXPECT_EQ(j.counts.skipped, 1);
  EXPECT_EQ(j.counts.created, 1);
  EXPECT_EQ(ByEmail("kept@example.com").first_name, "Kept");
  Contact f = ByEmail("fresh@example.com");
  EXPECT_EQ(f.first_name, "Fritz");
  EXPECT_FALSE(f.custom_fields.contains("Notes"));
  ASSERT_EQ(f.lists.size(), 1u);
  EXPECT_EQ(f.lists[0].name, "Newsletter");
  std::vector<std::string> tags;
  for (const auto& t : f.tags) tags.push_back(t.name);
  EXPECT_EQ(tags, (std::vector<std::string>{"imported", "press", "vip"}));
}

TEST_F(ImportFixture, AnUnknownListInARowMakesThatRowInvalidOnly) {
  ImportJob j = Run("email,lists\na@example.com,Nope\nb@example.com,\n");
  EXPECT_EQ(j.counts.invalid, 1);
  EXPECT_EQ(j.counts.created, 1);
  EXPECT_FALSE(s->contacts->GetByEmail("a@example.com"));
}

TEST_F(ImportFixture, DryRunCountsAndChangesNothing) {
  MakeContact("old@example.com");
  ImportJob j = Run("email,first_name\nold@example.com,Olga\nnew@example.com,Nora\nbad,\n",
                    Options({{"dry_run", "true"}}));
  EXPECT_EQ(j.counts.created, 1);
  EXPECT_EQ(j.counts.updated, 1);
  EXPECT_EQ(j.counts.invalid, 1);
  EXPECT_FALSE(s->contacts->GetByEmail("new@example.com"));
  EXPECT_EQ(ByEmail("old@example.com").first_name, "");
}

TEST_F(ImportFixture, EventsFalseEmitsNoContactEvents) {
  int64_t before = Events().empty() ? 0 : Events().back().id;
  ImportJob quiet = Run("email\nq@example.com\n", Options({{"events", "false"}}));
  EXPECT_EQ(quiet.counts.created, 1);
  EXPECT_TRUE(Events(before).empty());
  ImportJob loud = Run("email\nl@example.com\n");
  EXPECT_EQ(loud.counts.created, 1);
  EXPECT_FALSE(Events(before).empty());
}

TEST_F(ImportFixture, RefusesAFileThatIsNotUtf8HasNoEmailColumnOrIsTooLarge) {
  auto latin1 = s->imports->Create(cli, {}, Text("email,name\nz@example.com,Ren\xE9\n"));
  ASSERT_FALSE(latin1);
  EXPECT_EQ(latin1.error().message, "the file is not UTF-8 text");
  auto no_email = s->imports->Create(cli, {}, Text("name,phone\nA,1\n"));
  ASSERT_FALSE(no_email);
  EXPECT_NE(no_email.error().message.find("no email column"), std::string::npos);
  ImportService small(
      {.db = db.get(), .clock = &clock, .contacts = s->contacts.get(), .max_bytes = 16});
  auto big = small.Create(cli, {}, Text("email\nsomeone@example.com\n"));
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, Errc::kPayloadTooLarge);
  // Nothing kept of any of them.
  auto n = db->Read([](store::Conn& c) { return c.QueryOne("SELECT COUNT(*) FROM imports"); });
  ASSERT_TRUE(n);
  EXPECT_EQ((*n)->Int(0), 0);
}

TEST_F(ImportFixture, ALostWorkersImportResumesAtItsLastBatchWithNoRowTwice) {
  ImportService batches(
      {.db = db.get(), .clock = &clock, .contacts = s->contacts.get(), .batch_rows = 2});
  std::string csv = "email,first_name\n";
  for (int i = 0; i < 7; ++i) csv += "p" + std::to_string(i) + "@example.com,P\n";
  csv += "p0@example.com,Again\n";  // the file's own duplicate: updated once
  auto job = batches.Create(cli, {}, Text(csv));
  ASSERT_TRUE(job);
  auto leased = batches.Lease("node-a", 60);
  ASSERT_TRUE(leased && *leased);
  ASSERT_TRUE(batches.RunBatch(job->id, "node-a", 60));
  // node-a dies here. Until its lease runs out nobody else takes the import.
  auto early = batches.Lease("node-b", 60);
  ASSERT_TRUE(early);
  EXPECT_FALSE(*early);
  clock.Advance(61);
  auto taken = batches.Lease("node-b", 60);
  ASSERT_TRUE(taken && *taken);
  // node-a's late batch is refused: the import is node-b's now.
  auto late = batches.RunBatch(job->id, "node-a", 60);
  ASSERT_TRUE(late);
  EXPECT_FALSE(*late);
  auto done = batches.RunToEnd(job->id, "node-b", nullptr);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, "done");
  EXPECT_EQ(done->counts.rows_done, 8);
  EXPECT_EQ(done->counts.created, 7);
  EXPECT_EQ(done->counts.updated, 1);
  auto created_events = db->Read([](store::Conn& c) {
    return c.QueryOne("SELECT COUNT(*) FROM outbox_events WHERE event_type = 'contact.created'");
  });
  ASSERT_TRUE(created_events);
  EXPECT_EQ((*created_events)->Int(0), 7);
}

TEST_F(ImportFixture, ABatchKeepsEveryRuleForNewAndExistingAddressesAndCountsEachEventOnce) {
  MakeList("Newsletter");
  // One contact left the list; suppressed: one address and one domain.
  Contact left = MakeContact("left@example.com", {.lists = {std::string("Newsletter")}});
  ASSERT_TRUE(db->Write([&](store::Conn& c) -> Status {
    auto n =
        c.Exec("UPDATE contact_lists SET state = 'unsubscribed' WHERE contact_id = ?", {left.id});
    if (!n) return Fail(n.error());
    return Ok();
  }));
  ASSERT_TRUE(s->suppressions->Add(cli, {.email = "gone@example.com", .source = "test"}));
  ASSERT_TRUE(s->suppressions->Add(cli, {.domain = "blocked.example", .source = "test"}));
  int64_t before = LastEventId();
  // All in one batch: new addresses (one twice), suppressed ones, an existing contact that
  // left the list, a tag that does not exist yet and then does.
  ImportJob j =
      Run("email,first_name,tags\n"
          "a@example.com,A,fresh\n"      // created; the tag "fresh" is made
          "b@example.com,B,fresh|vip\n"  // created
          "a@example.com,Again,\n"       // the same address again: updated
          "gone@example.com,G,\n"        // suppressed address
          "x@blocked.example,X,\n"       // suppressed domain
          "left@example.com,Left,\n"     // updated, not put back on the list
          "c@example.com,C,\n",          // created
          Options({{"list", "Newsletter"}, {"tag", "imported"}}));
  EXPECT_EQ(j.counts.rows_done, 7);
  EXPECT_EQ(j.counts.created, 3);
  EXPECT_EQ(j.counts.updated, 2);
  EXPECT_EQ(j.counts.suppressed, 2);
  EXPECT_EQ(j.counts.invalid, 0);
  EXPECT_FALSE(s->contacts->GetByEmail("gone@example.com"));
  EXPECT_FALSE(s->contacts->GetByEmail("x@blocked.example"));
  Contact a = ByEmail("a@example.com");
  EXPECT_EQ(a.first_name, "Again");
  EXPECT_EQ(a.status, "pending");
  EXPECT_EQ(a.source, "import:" + std::to_string(j.id));
  ASSERT_EQ(a.lists.size(), 1u);
  std::vector<std::string> b_tags;
  for (const auto& t : ByEmail("b@example.com").tags) b_tags.push_back(t.name);
  EXPECT_EQ(b_tags, (std::vector<std::string>{"fresh", "imported", "vip"}));
  Contact l = ByEmail("left@example.com");
  EXPECT_EQ(l.first_name, "Left");
  EXPECT_TRUE(l.lists.empty());
  // Each event once: three contacts created, their list joins and tags added; the second
  // row of `a` changes only its name, `left` its name and the import's tag.
  std::map<std::string, int> by_type;
  for (const auto& e : Events(before)) ++by_type[e.event_type];
  EXPECT_EQ(by_type["contact.created"], 3);
  EXPECT_EQ(by_type["contact.updated"], 2);
  EXPECT_EQ(by_type["contact.list_added"], 3);
  EXPECT_EQ(by_type["contact.tag_added"], 2 + 3 + 1 + 1);  // a: 2, b: 3, left: 1, c: 1
  auto errors = s->imports->ErrorsCsv(j.id);
  ASSERT_TRUE(errors);
  EXPECT_EQ(*errors,
            "line,email,reason\r\n5,gone@example.com,suppressed address\r\n"
            "6,x@blocked.example,suppressed domain\r\n");
}

// A second, empty contact book beside the fixture's, on the same engine.
struct EmptyBook {
  std::unique_ptr<crmd::testing::ScratchDatabase> scratch;
  std::unique_ptr<store::Database> db;
  std::unique_ptr<governance::Services> governance;
  std::unique_ptr<Services> s;

  EmptyBook(CrmFixture& f, const std::string& path) {
    scratch = std::make_unique<crmd::testing::ScratchDatabase>(path, false, /*migrated=*/true);
    auto opened = store::Open(scratch->url(), 2);
    EXPECT_TRUE(opened);
    if (!opened) return;
    db = std::move(*opened);
    auto rules = governance::MakeServices({.db = db.get(), .clock = &f.clock, .random = &f.random});
    EXPECT_TRUE(rules);
    if (!rules) return;
    governance = std::move(*rules);
    auto made = MakeServices(*governance, {.db = db.get(),
                                           .clock = &f.clock,
                                           .random = &f.random,
                                           .resolver = &f.resolver,
                                           .usage = &f.usage,
                                           .suppression_key = testing::kSuppressionKey});
    EXPECT_TRUE(made);
    if (made) s = std::move(*made);
  }
};

std::string ExportAll(ContactExporter& exporter) {
  std::string out;
  auto n = exporter.WriteAll({}, [&](std::string_view bytes) {
    out.append(bytes);
    return true;
  });
  EXPECT_TRUE(n) << (n ? "" : n.error().message);
  return out;
}

TEST_F(ImportFixture, AnExportImportsIntoAnEmptyBookAsTheSameContacts) {
  MakeList("Newsletter");
  MakeList("Press");
  const std::vector<std::pair<std::string, ContactInput>> people = {
      {"ada@example.com",
       {.first_name = std::string("Ada"),
        .last_name = std::string("Lovelace"),
        .phone = std::string("+44 20 7946 0000"),
        .status = std::string("subscribed"),
        .type = std::string("customer"),
        .custom_fields = nlohmann::json{{"plan", "pro"}, {"seats", "12"}},
        .tags = {std::string("vip"), std::string("press")},
        .lists = {std::string("Newsletter"), std::string("Press")}}},
      {"pat@example.com", {.status = std::string("pending"), .tags = {std::string("vip")}}},
      {"una@example.com",
       {.first_name = std::string("Una, \"the\"\nsecond"),
        .status = std::string("unsubscribed"),
        .custom_fields = nlohmann::json{{"plan", "free"}}}},
      {"bo@example.com",
       {.first_name = std::string("=1+2"),
        .status = std::string("bounced"),
        .lists = {std::string("Press")}}},
      {"cy@example.com", {.status = std::string("complained"), .type = std::string("lead")}},
  };
  for (const auto& [email, in] : people) MakeContact(email, in);
  const std::string exported = ExportAll(*s->exporter);

  EmptyBook empty(*this, dir.path() + "/empty.db");
  ASSERT_TRUE(empty.s);
  // Lists are not rows of the file: the operator makes them (by name) before importing.
  for (const char* name : {"Newsletter", "Press"})
    ASSERT_TRUE(empty.s->lists->Create(alice, name, ""));
  auto job = empty.s->imports->Create(
      cli, Options({{"status", "subscribed"}, {"consent", "carried over from the old book"}}),
      Text(exported), "test");
  ASSERT_TRUE(job) << job.error().message;
  auto done = empty.s->imports->RunToEnd(job->id, "test", nullptr);
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(done->counts.created, static_cast<int64_t>(people.size()));
  EXPECT_EQ(done->counts.rows_done, static_cast<int64_t>(people.size()));

  for (const auto& [email, in] : people) {
    Contact a = ByEmail(email);
    auto b = empty.s->contacts->GetByEmail(email);
    ASSERT_TRUE(b) << email;
    EXPECT_EQ(b->first_name, a.first_name) << email;
    EXPECT_EQ(b->last_name, a.last_name) << email;
    EXPECT_EQ(b->phone, a.phone) << email;
    EXPECT_EQ(b->status, a.status) << email;
    EXPECT_EQ(b->type, a.type) << email;
    EXPECT_EQ(b->custom_fields, a.custom_fields) << email;
    auto names = [](const std::vector<NamedRef>& refs) {
      std::vector<std::string> out;
      for (const auto& r : refs) out.push_back(r.name);
      return out;
    };
    EXPECT_EQ(names(b->tags), names(a.tags)) << email;
    EXPECT_EQ(names(b->lists), names(a.lists)) << email;
  }
  // And the new book exports the same file, byte for byte.
  EXPECT_EQ(ExportAll(*empty.s->exporter), exported);
}

TEST_F(ImportFixture, CancelStopsAQueuedImport) {
  auto job = s->imports->Create(cli, {}, Text("email\na@example.com\n"));
  ASSERT_TRUE(job);
  auto c = s->imports->Cancel(cli, job->id);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "cancelled");
  auto leased = s->imports->Lease("node", 60);
  ASSERT_TRUE(leased);
  EXPECT_FALSE(*leased);
  EXPECT_FALSE(s->contacts->GetByEmail("a@example.com"));
  EXPECT_EQ(s->imports->Cancel(cli, job->id).error().code, Errc::kInvalidTransition);
}

}  // namespace
}  // namespace crmd::crm

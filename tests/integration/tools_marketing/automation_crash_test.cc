// Automation proof with the real crmd binary: a run with a wait step (seconds) is killed
// with SIGKILL while it waits and the node restarted on the same database; the steps after
// the wait still run, in order, exactly once per contact (the wait is a due time in the
// database, never a sleeping thread). docs/marketing.md, "Automations that run".
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "src/core/clock.h"
#include "src/core/http_client.h"
#include "src/core/random.h"
#include "src/crm/services.h"
#include "src/http/client.h"
#include "src/marketing/automations.h"
#include "src/marketing/services.h"
#include "src/store/db.h"
#include "tests/support/crmd_process.h"
#include "tests/support/domain.h"
#include "tests/support/test_database.h"
#include "tests/support/test_server.h"
#include "tests/support/wait.h"
#include "tests/unit/mail/python.h"

extern char** environ;

namespace crmd::testing {
namespace {

class AutomationCrash : public ::testing::Test {
 protected:
  AutomationCrash() : db_(dir_.path() + "/crmd.db") {}

  // `n` subscribed contacts tagged "vip" and an automation on that tag -- send "One",
  // wait 2 s, add the tag "done", send "Two" -- activated through the services (the
  // confirmed action's execute step), which enrols the tagged contacts.
  int64_t ActivatedAutomation(int n) {
    auto db = store::Open(db_.url(), 2);
    EXPECT_TRUE(db.has_value());
    if (!db) return 0;
    SystemClock clock;
    SecureRandom random;
    auto domain = crmd::testing::MakeDomain(**db, clock, random);
    EXPECT_TRUE(domain.has_value());
    if (!domain) return 0;
    governance::Actor actor{.kind = "cli", .subject = "test"};
    auto tags = (*db)->Write([&](store::Conn& c) -> Result<std::pair<int64_t, int64_t>> {
      auto vip = c.InsertReturningId(
          "INSERT INTO tags (name, created_at, updated_at) VALUES ('vip', 0, 0) RETURNING id");
      if (!vip) return Fail(vip.error());
      auto done = c.InsertReturningId(
          "INSERT INTO tags (name, created_at, updated_at) VALUES ('done', 0, 0) RETURNING id");
      if (!done) return Fail(done.error());
      for (int i = 0; i < n; ++i) {
        auto contact = c.InsertReturningId(
            "INSERT INTO contacts (email, status, first_name, source, created_at, updated_at) "
            "VALUES (?, 'subscribed', ?, 'test', 0, 0) RETURNING id",
            {"r" + std::to_string(i) + "@example.com", "R" + std::to_string(i)});
        if (!contact) return Fail(contact.error());
        auto m =
            c.Exec("INSERT INTO contact_tags (contact_id, tag_id, created_at) VALUES (?, ?, 0)",
                   {*contact, *vip});
        if (!m) return Fail(m.error());
      }
      return std::pair{*vip, *done};
    });
    EXPECT_TRUE(tags.has_value());
    if (!tags) return 0;
    auto a = (*domain)->marketing->automations->Create(
        actor, {{"name", "Welcome"},
                {"trigger", {{"type", "tag_added"}, {"tag_id", tags->first}}},
                {"steps", nlohmann::json::array({{{"type", "send_email"},
                                                  {"subject", "One {{first_name}}"},
                                                  {"text_body", "First"},
                                                  {"from_email", "news@example.com"}},
                                                 {{"type", "wait"}, {"seconds", 2}},
                                                 {{"type", "add_tag"}, {"tag_id", tags->second}},
                                                 {{"type", "send_email"},
                                                  {"subject", "Two {{first_name}}"},
                                                  {"text_body", "Second"},
                                                  {"from_email", "news@example.com"}}})}});
    EXPECT_TRUE(a.has_value()) << (a ? "" : a.error().message);
    if (!a) return 0;
    auto done = (*db)->Write([&](store::Conn& c) {
      return (*domain)->marketing->automations->Activate(c, actor, a->id);
    });
    EXPECT_TRUE(done.has_value()) << (done ? "" : done.error().message);
    return a->id;
  }

  int64_t Count(const std::string& sql) {
    auto db = store::Open(db_.url(), 1);
    if (!db) return -1;
    auto n = (*db)->Read([&](store::Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne(sql);
      if (!row) return Fail(row.error());
      return *row ? (*row)->Int(0) : 0;
    });
    return n.value_or(-1);
  }

  std::vector<std::string> Args() {
    return {"--listen_address=127.0.0.1",
            "--port=" + std::to_string(port_),
            "--database_url=" + db_.url(),
            "--smtp_url=smtp://127.0.0.1:" + std::to_string(sink_.port()),
            "--mail_rate_per_second=0",
            "--mail_poll_interval_ms=100",
            "--mail_lease_s=10",
            "--housekeeping_interval_s=0",
            "--log_level=warn"};
  }

  template <typename F>
  bool WaitUntil(int seconds, F f) {
    return crmd::testing::WaitUntil(f, seconds);
  }

  // Subjects received per envelope recipient, in arrival order (file names are ordered).
  std::map<std::string, std::vector<std::string>> Subjects() {
    std::map<std::string, std::vector<std::string>> out;
    std::vector<std::filesystem::path> metas;
    for (const auto& entry : std::filesystem::directory_iterator(sink_.dir()))
      if (entry.path().extension() == ".json") metas.push_back(entry.path());
    std::sort(metas.begin(), metas.end());
    for (const auto& p : metas) {
      std::ifstream in(p);
      auto meta = nlohmann::json::parse(in, nullptr, false);
      if (meta.is_discarded()) continue;
      std::string eml =
          mail::testing::ReadFile(p.parent_path().string() + "/" + p.stem().string() + ".eml");
      size_t s = eml.find("\r\nSubject: ");
      std::string subject =
          s == std::string::npos ? "" : eml.substr(s + 11, eml.find("\r\n", s + 11) - s - 11);
      for (const auto& r : meta["rcpt_tos"]) out[r.get<std::string>()].push_back(subject);
    }
    return out;
  }

  TempDir dir_;
  ScratchDatabase db_;
  mail::testing::SmtpSink sink_;
  uint16_t port_ = FreePort();
  std::string log_ = dir_.path() + "/crmd.log";
};

TEST_F(AutomationCrash, SigkillWhileWaitingThenRestartRunsTheRestOnceInOrder) {
  const int kContacts = 5;
  int64_t id = ActivatedAutomation(kContacts);
  ASSERT_GT(id, 0);
  {
    CrmdProcess crmd(Args(), log_);
    // Every first message received and recorded (a kill between the relay's 250 and the
    // record would resend that one message with its Message-ID: the documented bound, not
    // what this test is about).
    ASSERT_TRUE(WaitUntil(20, [&] {
      return sink_.MessageCount() >= kContacts &&
             Count("SELECT COUNT(*) FROM automation_runs WHERE current_step = 2") == kContacts;
    })) << sink_.MessageCount();
    crmd.Kill();  // every run is now inside its 2-second wait
  }
  EXPECT_EQ(sink_.MessageCount(), static_cast<size_t>(kContacts));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs WHERE current_step = 2"), kContacts);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the wait is over while nobody runs
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contact_tags t JOIN tags g ON g.id = t.tag_id WHERE g.name "
                  "= 'done'"),
            0);
  CrmdProcess again(Args(), log_);
  ASSERT_TRUE(WaitUntil(20, [&] {
    return Count("SELECT COUNT(*) FROM automation_runs WHERE status = 'completed'") == kContacts;
  })) << mail::testing::ReadFile(log_);
  auto got = Subjects();
  ASSERT_EQ(got.size(), static_cast<size_t>(kContacts));
  for (const auto& [rcpt, subjects] : got) {
    ASSERT_EQ(subjects.size(), 2u) << rcpt;
    EXPECT_EQ(subjects[0].rfind("One ", 0), 0u) << rcpt;
    EXPECT_EQ(subjects[1].rfind("Two ", 0), 0u) << rcpt;
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contact_tags t JOIN tags g ON g.id = t.tag_id WHERE g.name "
                  "= 'done'"),
            kContacts);
  EXPECT_EQ(Count("SELECT completed FROM automation_stats"), kContacts);
  EXPECT_EQ(Count("SELECT done FROM automation_step_stats WHERE step_index = 3"), kContacts);
}

}  // namespace
}  // namespace crmd::testing

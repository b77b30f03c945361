// Campaign delivery proof: a 1,000-recipient campaign goes to a real SMTP server from the
// real crmd binary, which is killed with SIGKILL in the middle and restarted on the same
// database. Every recipient gets the message; a message can be sent twice only when the
// kill fell between the relay's 250 and the record, at most one per sending thread, and
// then with the same Message-ID (docs/mail.md, "Exactly once, and the duplicate bound").
// Pause and resume are driven the same way, and stop within one batch per thread.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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

class DeliveryCrash : public ::testing::Test {
 protected:
  DeliveryCrash() : db_(dir_.path() + "/crmd.db") {}

  // `n` subscribed contacts in one list and a campaign to it, activated (the confirmed
  // action's execute step) through the services on the same database.
  int64_t ActivatedCampaign(int n) {
    auto db = store::Open(db_.url(), 2);
    EXPECT_TRUE(db.has_value());
    if (!db) return 0;
    SystemClock clock;
    SecureRandom random;
    auto domain = crmd::testing::MakeDomain(**db, clock, random);
    EXPECT_TRUE(domain.has_value());
    if (!domain) return 0;
    governance::Actor actor{.kind = "cli", .subject = "test"};
    auto list = (*db)->Write([&](store::Conn& c) -> Result<int64_t> {
      auto id = c.InsertReturningId(
          "INSERT INTO lists (name, created_at, updated_at) VALUES ('big', 0, 0) RETURNING id");
      if (!id) return id;
      for (int i = 0; i < n; ++i) {
        auto contact = c.InsertReturningId(
            "INSERT INTO contacts (email, status, first_name, source, created_at, updated_at) "
            "VALUES (?, 'subscribed', ?, 'test', 0, 0) RETURNING id",
            {"r" + std::to_string(i) + "@example.com", "R" + std::to_string(i)});
        if (!contact) return contact;
        auto m =
            c.Exec("INSERT INTO contact_lists (contact_id, list_id, created_at) VALUES (?, ?, 0)",
                   {*contact, *id});
        if (!m) return Fail(m.error());
      }
      return id;
    });
    EXPECT_TRUE(list.has_value());
    auto k = (*domain)->marketing->campaigns->Create(
        actor, {{"name", "Big"},
                {"subject", "Hello {{first_name}}"},
                {"from_email", "news@example.com"},
                {"text_body", "Hi {{first_name}}"},
                {"audience", {{"lists", {list.value_or(0)}}}}});
    EXPECT_TRUE(k.has_value());
    if (!k) return 0;
    auto done = (*db)->Write(
        [&](store::Conn& c) { return (*domain)->marketing->campaigns->Activate(c, actor, k->id); });
    EXPECT_TRUE(done.has_value()) << (done ? "" : done.error().message);
    return k->id;
  }

  std::string Status(int64_t id) {
    auto db = store::Open(db_.url(), 1);
    if (!db) return "";
    auto s = (*db)->Read([&](store::Conn& c) -> Result<std::string> {
      auto row = c.QueryOne("SELECT status FROM campaigns WHERE id = ?", {id});
      if (!row) return Fail(row.error());
      return *row ? (*row)->Str(0) : std::string();
    });
    return s.value_or("");
  }

  void SetStatus(int64_t id, const std::string& status) {
    auto db = store::Open(db_.url(), 1);
    ASSERT_TRUE(db.has_value());
    auto r = (*db)->Write([&](store::Conn& c) {
      return c.Exec("UPDATE campaigns SET status = ?, revision = revision + 1 WHERE id = ?",
                    {status, id});
    });
    ASSERT_TRUE(r.has_value());
  }

  std::vector<std::string> Args(int rate) {
    return {"--listen_address=127.0.0.1",
            "--port=" + std::to_string(port_),
            "--database_url=" + db_.url(),
            "--smtp_url=smtp://127.0.0.1:" + std::to_string(sink_.port()),
            "--mail_rate_per_second=" + std::to_string(rate),
            "--mail_concurrency=2",
            "--mail_poll_interval_ms=100",
            "--mail_lease_s=10",
            "--housekeeping_interval_s=0",
            "--log_level=warn"};
  }

  template <typename F>
  bool WaitUntil(int seconds, F f) {
    return crmd::testing::WaitUntil(f, seconds);
  }

  TempDir dir_;
  ScratchDatabase db_;
  mail::testing::SmtpSink sink_;
  uint16_t port_ = FreePort();
  std::string log_ = dir_.path() + "/crmd.log";
};

TEST_F(DeliveryCrash, SigkillMidCampaignStillReachesEveryRecipientOnce) {
  const int kRecipients = 1000;
  int64_t id = ActivatedCampaign(kRecipients);
  ASSERT_GT(id, 0);
  {
    CrmdProcess crmd(Args(250), log_);
    ASSERT_TRUE(WaitUntil(30, [&] { return sink_.MessageCount() >= 300; })) << sink_.MessageCount();
    crmd.Kill();  // SIGKILL with messages in flight
  }
  size_t before_restart = sink_.MessageCount();
  ASSERT_LT(before_restart, static_cast<size_t>(kRecipients))
      << "the kill came too late to prove anything";
  CrmdProcess again(Args(0), log_);
  ASSERT_TRUE(WaitUntil(90, [&] { return Status(id) == "sent"; })) << Status(id);
  auto got = sink_.MessageIdsByRecipient();
  EXPECT_EQ(got.size(), static_cast<size_t>(kRecipients));
  size_t total = 0, duplicated = 0;
  for (const auto& [rcpt, ids] : got) {
    total += ids.size();
    if (ids.size() > 1) {
      ++duplicated;
      // A resend after a crash carries the same Message-ID, so a relay can drop it.
      for (const auto& mid : ids) EXPECT_EQ(mid, ids[0]) << rcpt;
    }
  }
  // At most one message in flight per sending thread (mail_concurrency = 2) at the kill.
  EXPECT_LE(duplicated, 2u) << "total " << total;
  EXPECT_LE(total, static_cast<size_t>(kRecipients) + 2);
}

TEST_F(DeliveryCrash, PauseStopsWithinABatchAndResumeContinuesWhereItStopped) {
  const int kRecipients = 200;
  int64_t id = ActivatedCampaign(kRecipients);
  ASSERT_GT(id, 0);
  CrmdProcess crmd(Args(50), log_);
  ASSERT_TRUE(WaitUntil(30, [&] { return sink_.MessageCount() >= 20; }));
  SetStatus(id, "paused");  // what pause_campaign writes
  size_t at_pause = sink_.MessageCount();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  size_t settled = sink_.MessageCount();
  // Each of the 2 threads may finish the batch of 10 it holds.
  EXPECT_LE(settled, at_pause + 20) << at_pause;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(sink_.MessageCount(), settled);  // nothing more while paused
  EXPECT_EQ(Status(id), "paused");
  SetStatus(id, "sending");  // what the confirmed re-activation writes
  ASSERT_TRUE(WaitUntil(60, [&] { return Status(id) == "sent"; })) << Status(id);
  auto got = sink_.MessageIdsByRecipient();
  EXPECT_EQ(got.size(), static_cast<size_t>(kRecipients));
  for (const auto& [rcpt, ids] : got) EXPECT_EQ(ids.size(), 1u) << rcpt;
}

TEST_F(DeliveryCrash, RelayDownHoldsTheQueueAndSendingResumesOnItsOwn) {
  const int kRecipients = 20;
  int64_t id = ActivatedCampaign(kRecipients);
  ASSERT_GT(id, 0);
  HeldPort held;  // nobody listens there, and no other test can start listening there
  uint16_t relay_port = held.port();
  ASSERT_NE(relay_port, 0);
  std::vector<std::string> args = Args(0);
  for (auto& a : args)
    if (a.rfind("--smtp_url=", 0) == 0)
      a = "--smtp_url=smtp://127.0.0.1:" + std::to_string(relay_port);
  CrmdProcess crmd(args, log_);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  // Connection refused is the relay's trouble, not the recipients': nobody failed, no
  // attempt accumulates, the campaign is still sending. A lease counts its attempt up front
  // (so that a message that crashes crmd is not tried forever), and handing the batch back
  // after the refusal takes it back; a batch may be in flight as this reads, so a recipient
  // may show the one attempt under way, never more.
  EXPECT_EQ(Status(id), "sending");
  auto db = store::Open(db_.url(), 1);
  ASSERT_TRUE(db.has_value());
  auto counts = [&] {
    return (*db)->Read([&](store::Conn& c) -> Result<std::vector<int64_t>> {
      auto row = c.QueryOne(
          "SELECT SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END), SUM(attempts), "
          "MAX(attempts) FROM campaign_recipients WHERE campaign_id = ?",
          {id});
      if (!row) return Fail(row.error());
      return std::vector<int64_t>{(*row)->Int(0), (*row)->Int(1), (*row)->Int(2)};
    });
  };
  auto down = counts();
  ASSERT_TRUE(down.has_value());
  EXPECT_EQ((*down)[0], kRecipients);
  EXPECT_LE((*down)[2], 1);
  // The relay comes back on its port: sending resumes without anyone's help.
  held.Release();
  mail::testing::SmtpSink relay("plain", relay_port);
  ASSERT_EQ(relay.port(), relay_port);
  ASSERT_TRUE(WaitUntil(60, [&] { return Status(id) == "sent"; })) << Status(id);
  auto got = relay.MessageIdsByRecipient();
  EXPECT_EQ(got.size(), static_cast<size_t>(kRecipients));
  for (const auto& [rcpt, ids] : got) EXPECT_EQ(ids.size(), 1u) << rcpt;
  // Each recipient's record shows the one attempt that went through: none of the refused
  // connections while the relay was down was counted against anyone.
  auto after = counts();
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ((*after)[0], 0);
  EXPECT_EQ((*after)[1], kRecipients);
  EXPECT_EQ((*after)[2], 1);
}

}  // namespace
}  // namespace crmd::testing

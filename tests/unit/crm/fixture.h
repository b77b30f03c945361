#pragma once
// A fresh SQLite database with crm::Services, a fake clock and a fake resolver.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "src/core/random.h"
#include "src/crm/services.h"
#include "src/governance/services.h"
#include "src/store/db.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_server.h"

namespace crmd::crm::testing {

class FakeResolver final : public Resolver {
 public:
  std::map<std::string, DnsAnswer> answers;  // missing -> NXDOMAIN
  bool fail = false;
  Result<DnsAnswer> Lookup(const std::string& domain) override {
    if (fail) return Fail(Errc::kUnavailable, "temporary");
    auto it = answers.find(domain);
    if (it == answers.end()) return DnsAnswer{};
    return it->second;
  }
};

class FakeUsage final : public UsageSource {
 public:
  std::map<int64_t, std::vector<Usage>> lists, tags;
  Result<std::vector<Usage>> ListUsage(store::Conn&, int64_t id) override { return lists[id]; }
  Result<std::vector<Usage>> TagUsage(store::Conn&, int64_t id) override { return tags[id]; }
};

// The suppression list's key in tests (32 bytes; the server uses a random shared secret).
inline const std::string kSuppressionKey(32, 'k');

struct CrmFixture : public ::testing::Test {
  crmd::testing::TempDir dir;
  std::unique_ptr<crmd::testing::ScratchDatabase> scratch;  // SQLite file or PostgreSQL database
  FakeClock clock{1'760'000'000};
  SecureRandom random;
  FakeResolver resolver;
  FakeUsage usage;
  std::unique_ptr<store::Database> db;
  std::unique_ptr<governance::Services> governance;
  std::unique_ptr<Services> s;
  governance::Actor alice{
      .kind = "oauth", .subject = "user-alice", .client_id = "client-a", .request_id = "r1"};
  governance::Actor bob{
      .kind = "oauth", .subject = "user-bob", .client_id = "client-a", .request_id = "r2"};
  governance::Actor other_client{
      .kind = "oauth", .subject = "user-alice", .client_id = "client-b", .request_id = "r3"};

  void SetUp() override {
    scratch = std::make_unique<crmd::testing::ScratchDatabase>(dir.path() + "/crm.db", false,
                                                               /*migrated=*/true);
    auto opened = store::Open(scratch->url(), 4);
    ASSERT_TRUE(opened) << opened.error().detail;
    db = std::move(*opened);
    auto rules = governance::MakeServices({.db = db.get(), .clock = &clock, .random = &random});
    ASSERT_TRUE(rules) << rules.error().message;
    governance = std::move(*rules);
    auto made = MakeServices(*governance, {.db = db.get(),
                                           .clock = &clock,
                                           .random = &random,
                                           .resolver = &resolver,
                                           .usage = &usage,
                                           .suppression_key = kSuppressionKey});
    ASSERT_TRUE(made) << made.error().message;
    s = std::move(*made);
  }

  // Sets the settings' approval_policy as the operator would (crmctl). Tests about other
  // things than human approval use {"require_person": []}: the assistant may confirm alone.
  void SetApprovalPolicy(const nlohmann::json& policy) {
    UpdateSettings({{"approval_policy", policy}});
  }
  // Changes the settings as the operator would (crmctl), at their current revision.
  void UpdateSettings(const nlohmann::json& patch) {
    auto cur = s->governance.settings->Get();
    ASSERT_TRUE(cur);
    auto r = s->governance.settings->Update(governance::Actor{.kind = "cli", .subject = "test"},
                                            cur->revision, patch);
    ASSERT_TRUE(r) << r.error().message;
  }
  void AssistantMayConfirmAlone() {
    SetApprovalPolicy({{"require_person", nlohmann::json::array()}});
  }

  Contact MakeContact(const std::string& email, ContactInput in = {}) {
    in.email = email;
    auto c = s->contacts->Create(alice, in);
    EXPECT_TRUE(c) << (c ? "" : c.error().message);
    return c ? *c : Contact{};
  }

  std::vector<OutboxEvent> Events(int64_t after = 0) {
    auto r = db->Read([&](store::Conn& c) { return s->outbox->After(c, after, 1000); });
    EXPECT_TRUE(r);
    return r ? *r : std::vector<OutboxEvent>{};
  }
  int64_t LastEventId() {
    auto e = Events();
    return e.empty() ? 0 : e.back().id;
  }
};

}  // namespace crmd::crm::testing

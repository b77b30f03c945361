#pragma once
// The human-approval fixture (TOOLS.md "Confirmation" 5, docs/mcp.md "Human approval"): a
// real crmd under the product's default approval policy, assistants on both protocol
// generations over /mcp with real bearer tokens, and the person in a Browser that signs in
// on /console/login and decides on /console/approvals/<id>.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "src/app/services.h"
#include "src/governance/approval_policy.h"
#include "tests/integration/tools_marketing/fixture.h"
#include "tests/support/browser.h"

namespace crmd::testing {

inline constexpr const char* kPassword = "correct horse battery staple";
inline const nlohmann::json kUrlElicitation{
    {"elicitation", {{"form", nlohmann::json::object()}, {"url", nlohmann::json::object()}}}};

enum class Era { kSession, kModern };
inline std::string EraName(Era e) { return e == Era::kSession ? "2025_11_25" : "2026_07_28"; }

class Approvals : public MarketingTools {
 public:
  // For the per-action cases below.
  using MarketingTools::AddContact;
  using MarketingTools::AddList;
  using MarketingTools::AddTag;
  using MarketingTools::Call;
  using MarketingTools::Count;
  using MarketingTools::Exec;
  using MarketingTools::ReadyCampaign;

 protected:
  // The product default: every confirmable action needs the person.
  // Slow sending (one message, then one per 100 s) with short leases: see
  // SentCampaignWithFailures.
  Approvals()
      : MarketingTools(TestServerOptions{.configure =
                                             [](Config& c) {
                                               c.mail_rate_per_second = 0.01;
                                               c.mail_lease_s = 10;
                                             },
                                         .approval_policy = governance::DefaultApprovalPolicy()}) {
    auto& users = *server_.app().services().users;
    // alice approves her own assistants' actions, as an administrator may
    // (governance/approval_policy.h); bob is an editor.
    auto a = users.Create("alice@example.com", kPassword, true);
    auto b = users.Create("bob@example.com", kPassword, false);
    EXPECT_TRUE(a && b);
    if (a) alice_ = std::to_string(a->id);
    if (b) bob_ = std::to_string(b->id);
  }

  // An assistant acting for `subject` (alice unless told), in one protocol generation.
  std::unique_ptr<McpClient> Assistant(Era era,
                                       nlohmann::json capabilities = nlohmann::json::object(),
                                       std::string subject = "") {
    std::string token = MintTestToken(
        server_,
        TestTokenOptions{.client_id = "assistant", .subject = subject.empty() ? alice_ : subject});
    auto c = std::make_unique<McpClient>(server_, McpClientOptions{.token = token});
    if (era == Era::kSession) {
      EXPECT_TRUE(c->Initialize("2025-11-25", capabilities).ok());
    } else {
      c->UseModern({.capabilities = std::move(capabilities)});
      c->ListTools();  // the output schemas, for checking structuredContent
    }
    return c;
  }

  // A browser signed in on the console.
  std::unique_ptr<Browser> Person(const std::string& email) {
    auto b = std::make_unique<Browser>(server_);
    Page after = SignInToConsole(*b, email, kPassword);
    EXPECT_EQ(after.status, 200) << after.body;  // the pending approvals list
    return b;
  }

  // Opens the approval page and presses Approve (or Deny); the resulting page.
  Page Decide(Browser& b, const std::string& url, bool approve) {
    Page page = b.Get(url);
    EXPECT_EQ(page.status, 200) << page.body;
    auto form = page.form();
    EXPECT_TRUE(form.has_value()) << page.body;
    if (!form) return page;
    form->Set("decision", approve ? "approve" : "deny");
    return b.Submit(*form);
  }

 public:
  // A campaign that went out and whose messages the relay refused for good (the real
  // queue: activated, leased and recorded as permanent refusals), so that
  // activate_campaign resend="undelivered" (the resend_campaign action) has recipients.
  nlohmann::json SentCampaignWithFailures(McpClient& c) {
    int64_t list = AddList("resend-" + std::to_string(Count("SELECT COUNT(*) FROM lists")));
    for (int i = 0; i < 6; ++i)
      InList(AddContact("rs" + std::to_string(list) + "-" + std::to_string(i) + "@example.com"),
             list);
    nlohmann::json created = Call(c, "create_campaign",
                                  {{"name", "Resend"},
                                   {"subject", "Hello"},
                                   {"from_email", "team@example.com"},
                                   {"text_body", "Hi"},
                                   {"audience", {{"lists", {list}}}}});
    int64_t id = created["campaign"].value("id", int64_t{0});
    auto& s = *server_.app().services().marketing;
    governance::Actor system{
        .kind = "system", .subject = "test", .client_id = "", .request_id = ""};
    auto activated = server_.app().services().db->Write(
        [&](store::Conn& conn) { return s.campaigns->Activate(conn, system, id); });
    EXPECT_TRUE(activated.has_value()) << activated.error().message;
    // The node's own sender polls the same queue and may lease the recipients first (it
    // sends one and holds the rest through its 100 s throttle); its lease lasts
    // mail_lease_s (10 s here), after which they are leased here. Every recipient leased
    // here is refused for good. The sender marks the campaign sent once every recipient
    // has a final state (a revision change that would make a preview taken before it
    // stale). The node's two sender threads may both be waiting in the throttle, each for
    // up to 100 s per message of a batch whose leases it has lost, before either marks the
    // campaign again, so this loop advances campaign statuses itself, as another node's
    // sender would.
    int failed = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
    while (Count("SELECT COUNT(*) FROM campaigns WHERE id = ? AND status = 'sent'", {id}) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      auto leased = s.delivery->Lease(100);
      EXPECT_TRUE(leased.has_value());
      if (leased) {
        for (const auto& r : *leased) {
          if (r.campaign_id != id) continue;
          marketing::SendReport refused{.kind = marketing::SendReport::Kind::kRejected,
                                        .reason = "554 message refused",
                                        .smtp_code = 554};
          EXPECT_TRUE(s.delivery->Record(r, refused).has_value());
          ++failed;
        }
      }
      EXPECT_TRUE(s.delivery->Advance().has_value());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_GT(failed, 0) << "no recipient of campaign " << id << " was leased";
    EXPECT_EQ(Count("SELECT COUNT(*) FROM campaigns WHERE id = ? AND status = 'sent'", {id}), 1);
    return nlohmann::json{{"id", id}, {"resend", "undelivered"}};
  }

 protected:
  std::string alice_, bob_;
};

}  // namespace crmd::testing

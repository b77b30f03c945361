// The suppression list end to end on a real crmd (SQLite, and PostgreSQL as pg.*): a
// contact that complained is deleted, and its address then comes back through REST, an
// incoming webhook, an import, a form and the assistant's tools. None of them makes it
// subscribed, the entry keeps no clear-text address, and a campaign whose row says
// subscribed still skips it.
#include <chrono>
#include <thread>

#include "src/app/services.h"
#include "src/core/text.h"
#include "src/crm/imports.h"
#include "src/governance/api_keys.h"
#include "src/webhooks/incoming.h"
#include "tests/integration/tools_crm/fixture.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

constexpr const char* kBase = "/api/crm/v1";
constexpr const char* kAddress = "Complainer@Example.ORG";
constexpr const char* kNormalized = "complainer@example.org";

class Suppression : public CrmTools {
 protected:
  std::string Key(governance::ApiKeyRole role) {
    auto k = server_.app().services().governance->api_keys->Create("test", role);
    EXPECT_TRUE(k.has_value());
    return k ? k->secret : std::string();
  }
  static http::Headers Bearer(const std::string& key) {
    return {{"Authorization", "Bearer " + key}};
  }
  int64_t Contacts(const std::string& email) {
    return Count("SELECT COUNT(*) FROM contacts WHERE email = ?", {email});
  }
  std::string StatusOf(const std::string& email) {
    auto s = db_->Read([&](store::Conn& c) -> Result<std::string> {
      auto row = c.QueryOne("SELECT status FROM contacts WHERE email = ?", {email});
      if (!row) return Fail(row.error());
      return *row ? (*row)->Str(0) : std::string();
    });
    return s.value_or("?");
  }
  // Every text the suppressions table holds, in one string.
  std::string SuppressionText() {
    auto s = db_->Read([&](store::Conn& c) -> Result<std::string> {
      auto rows = c.Query(
          "SELECT COALESCE(address_hash, ''), COALESCE(domain, ''), reason, source "
          "FROM suppressions");
      if (!rows) return Fail(rows.error());
      std::string all;
      for (const auto& r : *rows)
        for (size_t i = 0; i < r.size(); ++i) all += r.Str(i) + "\n";
      return all;
    });
    return s.value_or("");
  }
};

TEST_F(Suppression, AComplainedContactDeletedComesBackThroughNoFace) {
  const std::string key = Key(governance::ApiKeyRole::kIntegration);
  const std::string admin = Key(governance::ApiKeyRole::kAdmin);
  auto c = Client();
  int64_t list = NewList(*c, "News");

  // A subscriber complains, and is then deleted (the person asked to be forgotten).
  auto made = server_.PostJson(std::string(kBase) + "/contact",
                               {{"email", kAddress}, {"status", "subscribed"}, {"lists", {"News"}}},
                               Bearer(key));
  ASSERT_EQ(made.status, 201) << made.body;
  auto complaint = server_.PostJson(std::string(kBase) + "/mail/events",
                                    {{"email", kAddress}, {"type", "complaint"}}, Bearer(key));
  ASSERT_EQ(complaint.status, 200) << complaint.body;
  ASSERT_EQ(StatusOf(kNormalized), "complained");
  auto gone = server_.Send("DELETE", std::string(kBase) + "/contact/delete/" + kNormalized, "",
                           Bearer(key));
  ASSERT_EQ(gone.status, 200) << gone.body;
  ASSERT_EQ(Contacts(kNormalized), 0);

  // The entry stays, found by the address, and holds it nowhere in clear.
  auto looked =
      server_.Get(std::string(kBase) + "/suppressions?email=" + kNormalized, Bearer(admin));
  ASSERT_EQ(looked.status, 200) << looked.body;
  json entries = JsonBody(looked)["suppressions"];
  ASSERT_EQ(entries.size(), 1u) << looked.body;
  EXPECT_EQ(entries[0]["reason"], "complaint");
  EXPECT_TRUE(entries[0]["email"].is_null());
  const std::string stored = SuppressionText();
  EXPECT_NE(stored.find("complaint"), std::string::npos);
  EXPECT_EQ(text::AsciiLower(stored).find("complainer"), std::string::npos) << stored;
  // An integration key does not see the list.
  EXPECT_EQ(server_.Get(std::string(kBase) + "/suppressions", Bearer(key)).status, 403);

  // REST, with and without a status: refused with the problem code `suppressed`.
  for (json body :
       {json{{"email", kAddress}, {"status", "subscribed"}}, json{{"email", kAddress}}}) {
    auto again = server_.PostJson(std::string(kBase) + "/contact", body, Bearer(key));
    EXPECT_EQ(again.status, 409) << again.body;
    EXPECT_EQ(JsonBody(again).value("code", ""), "suppressed") << again.body;
  }
  EXPECT_EQ(Contacts(kNormalized), 0);

  // An incoming webhook that subscribes whoever it is sent.
  auto hook =
      server_.app().services().incoming_hooks->Create({.name = "shop",
                                                       .mapping = json{{"email", "customer.email"}},
                                                       .applies = json{{"status", "subscribed"}}});
  ASSERT_TRUE(hook) << hook.error().message;
  auto hooked = server_.PostJson(std::string(kBase) + "/hooks/" + hook->token,
                                 {{"customer", {{"email", kAddress}}}});
  EXPECT_EQ(hooked.status, 409) << hooked.body;
  EXPECT_EQ(JsonBody(hooked).value("code", ""), "suppressed") << hooked.body;
  EXPECT_EQ(Contacts(kNormalized), 0);

  // An import of the address, subscribed with the operator's consent note: the row is
  // counted as suppressed and reported, and nothing is created.
  crm::ImportService& imports = *server_.app().services().crm->imports;
  auto options = crm::ParseImportOptions(
      {{"status", "subscribed"}, {"consent", "signed up at the fair"}, {"list", "News"}});
  ASSERT_TRUE(options) << options.error().message;
  std::string csv = std::string("email,first_name\r\n") + kAddress + ",Comp\r\n";
  size_t offset = 0;
  auto job = imports.Create(
      governance::Actor{.kind = "cli", .subject = "operator"}, *options,
      [&](char* buf, size_t n) {
        size_t k = std::min(n, csv.size() - offset);
        csv.copy(buf, k, offset);
        offset += k;
        return k;
      },
      "test-owner");
  ASSERT_TRUE(job) << job.error().message;
  auto imported = imports.RunToEnd(job->id, "test-owner", [](const crm::ImportJob&) {});
  ASSERT_TRUE(imported) << imported.error().message;
  EXPECT_EQ(imported->status, "done");
  EXPECT_EQ(imported->counts.suppressed, 1);
  EXPECT_EQ(imported->counts.created, 0);
  auto errors = imports.ErrorsCsv(job->id);
  ASSERT_TRUE(errors) << errors.error().message;
  EXPECT_NE(errors->find("\n2,"), std::string::npos) << *errors;
  EXPECT_NE(errors->find(",suppressed address"), std::string::npos) << *errors;
  EXPECT_EQ(Contacts(kNormalized), 0);

  // The assistant: create_contact and upsert_contacts_bulk say why.
  Err(*c, "create_contact", {{"email", kAddress}, {"status", "subscribed"}}, "suppressed");
  json bulk = Ok(*c, "upsert_contacts_bulk",
                 {{"contacts", {{{"email", kAddress}}, {{"email", "fresh@example.org"}}}}});
  EXPECT_EQ(bulk["results"][0]["outcome"], "failed") << bulk.dump();
  EXPECT_EQ(bulk["results"][0]["error"]["code"], "suppressed") << bulk.dump();
  EXPECT_EQ(bulk["results"][1]["outcome"], "created") << bulk.dump();
  EXPECT_EQ(Contacts(kNormalized), 0);

  // A form: the person's own signup is kept pending for their confirmation, not subscribed.
  auto form = server_.app().services().crm->forms->Create(
      {{"name", "Footer"},
       {"fields", {{{"name", "email"}, {"type", "Email"}, {"required", true}}}},
       {"applies", {{"status", "subscribed"}, {"lists", {"News"}}}},
       {"allowed_origins", {"*"}}});
  ASSERT_TRUE(form) << form.error().message;
  auto submitted = server_.PostJson(std::string(kBase) + "/form/submit/" + form->public_id,
                                    {{"fields", {{"email", kAddress}}}});
  ASSERT_EQ(submitted.status, 201) << submitted.body;
  EXPECT_EQ(StatusOf(kNormalized), "pending");
  int64_t id = JsonBody(submitted).value("contact_id", int64_t{0});

  // Neither the assistant's consent nor an update makes it subscribed; get_contact says why.
  Err(*c, "set_contact_status", {{"id", id}, {"status", "subscribed"}, {"consent", true}},
      "suppressed");
  json got = Ok(*c, "get_contact", {{"id", id}});
  EXPECT_EQ(got["suppression"].value("reason", ""), "complaint") << got.dump();
  EXPECT_EQ(StatusOf(kNormalized), "pending");

  // Some row says subscribed anyway: the activation preview counts the address apart, and
  // the send queue skips it with the reason.
  ASSERT_TRUE(db_->Write([&](store::Conn& conn) {
    return Discard(conn.Exec("UPDATE contacts SET status = 'subscribed' WHERE id = ?", {id}));
  }));
  json campaign = Ok(*c, "create_campaign",
                     {{"name", "Launch"},
                      {"subject", "Hello"},
                      {"from_email", "team@example.com"},
                      {"text_body", "Hi. Unsubscribe: {{unsubscribe_url}}"},
                      {"audience", {{"lists", {list}}}}});
  int64_t campaign_id = campaign["campaign"].value("id", int64_t{0});
  json preview = Ok(*c, "activate_campaign", {{"id", campaign_id}});
  EXPECT_EQ(preview["preview"].value("suppressed_recipients", -1), 1) << preview.dump();
  json done =
      Ok(*c, "confirm_action", {{"confirmation_token", preview.value("confirmation_token", "")}});
  ASSERT_EQ(done.value("status", ""), "done") << done.dump();
  auto leased = server_.app().services().marketing->delivery->Lease(10);
  ASSERT_TRUE(leased) << leased.error().message;
  for (const auto& r : *leased) EXPECT_NE(r.contact_id, id);
  std::string reason;
  for (int i = 0; i < 100 && reason.empty(); ++i) {
    auto row = db_->Read([&](store::Conn& conn) -> Result<std::string> {
      auto r = conn.QueryOne(
          "SELECT status, reason FROM campaign_recipients WHERE campaign_id = ? AND "
          "contact_id = ?",
          {campaign_id, id});
      if (!r) return Fail(r.error());
      return *r && (*r)->Str(0) == "skipped" ? (*r)->Str(1) : std::string();
    });
    if (row) reason = *row;
    if (reason.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(reason, "address suppressed (complaint)");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients WHERE contact_id = ? AND "
                  "message_id IS NOT NULL",
                  {id}),
            0);
}

TEST_F(Suppression, AnAdministratorsRemovalIsAuditedAndLiftsTheEntry) {
  const std::string admin = Key(governance::ApiKeyRole::kAdmin);
  auto c = Client();
  auto added = server_.PostJson(std::string(kBase) + "/suppressions",
                                {{"email", kAddress}, {"reason", "manual"}}, Bearer(admin));
  ASSERT_EQ(added.status, 201) << added.body;
  int64_t entry = JsonBody(added)["suppression"].value("id", int64_t{0});
  auto twice = server_.PostJson(std::string(kBase) + "/suppressions", {{"email", kNormalized}},
                                Bearer(admin));
  EXPECT_EQ(twice.status, 200) << twice.body;
  EXPECT_EQ(JsonBody(twice)["suppression"].value("id", int64_t{0}), entry);
  auto domain =
      server_.PostJson(std::string(kBase) + "/suppressions",
                       {{"domain", "Blocked.Example.org"}, {"reason", "manual"}}, Bearer(admin));
  ASSERT_EQ(domain.status, 201) << domain.body;
  EXPECT_EQ(JsonBody(domain)["suppression"].value("domain", ""), "blocked.example.org");
  auto bad = server_.PostJson(std::string(kBase) + "/suppressions",
                              {{"email", kAddress}, {"domain", "x.org"}}, Bearer(admin));
  EXPECT_EQ(bad.status, 422) << bad.body;

  auto list = server_.Get(std::string(kBase) + "/suppressions?kind=address", Bearer(admin));
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(JsonBody(list)["suppressions"].size(), 1u) << list.body;

  Err(*c, "create_contact", {{"email", kAddress}, {"status", "subscribed"}}, "suppressed");
  Err(*c, "create_contact", {{"email", "anyone@blocked.example.org"}, {"status", "subscribed"}},
      "suppressed");
  // Not subscribed is allowed: the address may be on file, it is only never mailed.
  Ok(*c, "create_contact", {{"email", "other@blocked.example.org"}, {"status", "unsubscribed"}});

  auto removed = server_.Send(
      "DELETE", std::string(kBase) + "/suppressions/" + std::to_string(entry), "", Bearer(admin));
  ASSERT_EQ(removed.status, 200) << removed.body;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = 'remove_suppression'"), 1);
  EXPECT_EQ(server_
                .Send("DELETE", std::string(kBase) + "/suppressions/" + std::to_string(entry), "",
                      Bearer(admin))
                .status,
            404);
  json created = Ok(*c, "create_contact", {{"email", kAddress}, {"status", "subscribed"}});
  EXPECT_EQ(created["contact"].value("status", ""), "subscribed") << created.dump();
  EXPECT_TRUE(Ok(*c, "get_contact", {{"email", kAddress}})["suppression"].is_null());
}

TEST_F(Suppression, AGlobalUnsubscribeEntersTheAddressAndTheConsentFlagDoesNotLiftIt) {
  auto c = Client();
  int64_t id = NewContact(*c, "leaver@example.org");
  Ok(*c, "set_contact_status", {{"id", id}, {"status", "unsubscribed"}});
  json got = Ok(*c, "get_contact", {{"id", id}});
  EXPECT_EQ(got["suppression"].value("reason", ""), "unsubscribed") << got.dump();
  Err(*c, "set_contact_status", {{"id", id}, {"status", "subscribed"}, {"consent", true}},
      "suppressed");
  EXPECT_EQ(Ok(*c, "get_contact", {{"id", id}})["contact"].value("status", ""), "unsubscribed");
}

}  // namespace
}  // namespace crmd::testing

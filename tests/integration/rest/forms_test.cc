// Forms over loopback: admin endpoints, GET /form/get (what it tells a stranger, what it
// tells a key holder), POST /form/submit with every field kind, required fields, keys,
// honeypot, public ids, CORS, per-IP limit and 50 concurrent submissions.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "src/crm/services.h"
#include "tests/integration/rest/rest_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using crmd::testing::TestServer;
using crmd::testing::TestServerOptions;
using nlohmann::json;

json SignupForm() {
  return {
      {"name", "Footer signup"},
      {"fields",
       {{{"name", "email"}, {"type", "Email"}, {"label", "Email"}, {"required", true}},
        {{"name", "first_name"}, {"type", "Input"}, {"label", "First name"}, {"required", true}},
        {{"name", "about"}, {"type", "Textarea"}},
        {{"name", "plan"}, {"type", "Dropdown"}, {"options", {"free", "pro"}}},
        {{"name", "size"}, {"type", "Radio"}, {"options", {"small", "large"}}},
        {{"name", "terms"}, {"type", "Checkbox"}, {"required", true}},
        {{"name", "interests"}, {"type", "Checkbox"}, {"options", {"mail", "sms"}}},
        {{"name", "newsletters"}, {"type", "List"}, {"options", {"Weekly", "Offers"}}},
        {{"name", "title"}, {"type", "Heading"}, {"label", "Join us"}},
        {{"name", "logo"}, {"type", "Image"}},
        {{"name", "privacy"}, {"type", "Link"}},
        {{"name", "intro"}, {"type", "Paragraph"}, {"label", "Once a week."}}}},
      {"applies",
       {{"status", "subscribed"},
        {"type", "customer"},
        {"tags", {"web", "footer"}},
        {"lists", {"Customers"}}}},
      {"display_rules", {{"after_submit", "show_message"}, {"message", "Thanks!"}}},
      {"allowed_origins", {"https://shop.example"}},
      {"honeypot_field", "website"}};
}

json GoodFields(const std::string& email) {
  return {{"email", email},        {"first_name", "Grace"},    {"about", "compilers"},
          {"plan", "pro"},         {"size", "small"},          {"terms", true},
          {"interests", {"mail"}}, {"newsletters", {"Weekly"}}};
}

class RestForms : public ::testing::Test {
 protected:
  explicit RestForms(TestServerOptions options = {}) : server_(std::move(options)) {}
  void SetUp() override {
    admin_ = NewKey(server_, governance::ApiKeyRole::kAdmin);
    key_ = NewKey(server_);
    auto& lists = *server_.app().services().crm->lists;
    for (const char* n : {"Customers", "Weekly", "Offers"})
      ASSERT_TRUE(lists.Create({.kind = "cli"}, n, ""));
    auto created = server_.PostJson(Url("/admin/forms"), SignupForm(), Bearer(admin_));
    ASSERT_EQ(created.status, 201) << created.body;
    form_id_ = JsonBody(created)["id"];
    public_id_ = JsonBody(created)["public_id"];
  }
  // The public URLs carry the public id.
  std::string Submit() const { return Url("/form/submit/" + public_id_); }
  std::string Get() const { return Url("/form/get/" + public_id_); }
  std::string NumericGet() const { return Url("/form/get/" + std::to_string(form_id_)); }
  int64_t Generated() {
    auto f = server_.app().services().crm->forms->Get(form_id_);
    return f ? f->generated_contacts : -1;
  }

  TestServer server_;
  std::string admin_, key_;
  int64_t form_id_ = 0;
  std::string public_id_;
};

TEST_F(RestForms, AKeyHolderReadsTheWholeConfiguration) {
  auto r = server_.Get(Get(), Bearer(key_));
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = JsonBody(r);
  EXPECT_EQ(j["id"], form_id_);
  EXPECT_EQ(j["public_id"], public_id_);
  EXPECT_EQ(j["name"], "Footer signup");
  ASSERT_EQ(j["fields"].size(), 12u);
  EXPECT_EQ(j["fields"][0]["type"], "Email");
  EXPECT_EQ(j["fields"][0]["required"], true);
  EXPECT_EQ(j["fields"][3]["options"], json({"free", "pro"}));
  EXPECT_EQ(j["fields"][11]["takes_value"], false);
  EXPECT_EQ(j["applies"]["status"], "subscribed");
  EXPECT_EQ(j["applies"]["tags"], json({"web", "footer"}));
  EXPECT_EQ(j["display_rules"]["message"], "Thanks!");
  EXPECT_EQ(j["honeypot_field"], "website");
  EXPECT_EQ(j["generated_contacts"], 0);
  // A key holder may still name the form by its numeric id.
  auto numeric = server_.Get(NumericGet(), Bearer(key_));
  EXPECT_EQ(numeric.status, 200);
  EXPECT_EQ(JsonBody(numeric)["public_id"], public_id_);
  auto missing = server_.Get(Url("/form/get/99999"), Bearer(key_));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(JsonBody(missing)["code"], "form_not_found");
  EXPECT_EQ(server_.Get(Url("/form/get/abc")).status, 404);
}

TEST_F(RestForms, AStrangerGetsOnlyWhatARendererNeeds) {
  ASSERT_EQ(server_.PostJson(Submit(), {{"fields", GoodFields("seen@example.com")}}).status, 201);
  auto r = server_.Get(Get());
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = JsonBody(r);
  std::set<std::string> members;
  for (const auto& [k, v] : j.items()) members.insert(k);
  EXPECT_EQ(members, (std::set<std::string>{"id", "name", "fields", "extra_input"})) << r.body;
  EXPECT_EQ(j["id"], public_id_);
  ASSERT_EQ(j["fields"].size(), 12u);
  EXPECT_EQ(j["fields"][3]["options"], json({"free", "pro"}));
  EXPECT_EQ(j["fields"][7]["options"], json({"Weekly", "Offers"}));  // shown to the visitor
  // Nothing internal anywhere in the answer: the applied tags and list, the display rules,
  // the honeypot's configured name, the count.
  for (const char* secret : {"\"web\"", "footer", "Customers", "customer", "Thanks!",
                             "show_message", "website", "shop.example", "generated"})
    EXPECT_EQ(r.body.find(secret), std::string::npos) << secret << " in " << r.body;
  // The renderer's hidden input is a plausible field name of its own.
  std::string extra = j["extra_input"];
  EXPECT_FALSE(extra.empty());
  EXPECT_NE(extra, "website");
  for (const auto& f : j["fields"]) EXPECT_NE(f["name"], extra);
}

TEST_F(RestForms, ThePublicHoneypotNameCatchesABotAndIsEmptyForAPerson) {
  std::string extra = JsonBody(server_.Get(Get()))["extra_input"];
  json f = GoodFields("bot2@example.com");
  f[extra] = "http://spam.example";
  auto bot = server_.PostJson(Submit(), {{"fields", f}});
  EXPECT_EQ(bot.status, 200) << bot.body;
  EXPECT_TRUE(JsonBody(bot)["contact_id"].is_null());
  EXPECT_FALSE(server_.app().services().crm->contacts->GetByEmail("bot2@example.com"));
  f[extra] = "";
  EXPECT_EQ(server_.PostJson(Submit(), {{"fields", f}}).status, 201);
  EXPECT_EQ(Generated(), 1);
}

TEST_F(RestForms, NumericFormIdsFindNothingWithoutAKey) {
  // Counting ids tells a stranger nothing: the form that exists answers like one that does
  // not, on every public path.
  for (const std::string& id : {std::to_string(form_id_), std::string("99999")}) {
    auto get = server_.Get(Url("/form/get/" + id));
    EXPECT_EQ(get.status, 404) << id;
    EXPECT_EQ(JsonBody(get)["code"], "form_not_found");
    auto post = server_.PostJson(Url("/form/submit/" + id), {{"fields", GoodFields("n@x.org")}});
    EXPECT_EQ(post.status, 404) << id;
    auto pre = server_.Send("OPTIONS", Url("/form/submit/" + id), "",
                            {{"Origin", "https://shop.example"}});
    EXPECT_EQ(pre.status, 404) << id;
  }
  EXPECT_EQ(Generated(), 0);
  // A guessed public id of the right shape finds nothing either.
  EXPECT_EQ(server_.Get(Url("/form/get/frm_" + std::string(32, '0'))).status, 404);
  // A server-side integration with a key may still submit by numeric id.
  auto keyed = server_.PostJson(Url("/form/submit/" + std::to_string(form_id_)),
                                {{"fields", GoodFields("keyed@example.com")}}, Bearer(key_));
  EXPECT_EQ(keyed.status, 201) << keyed.body;
}

TEST_F(RestForms, SubmitCreatesContactAppliesEverythingAndCounts) {
  auto r = server_.PostJson(Submit(), {{"fields", GoodFields("Grace@Example.com")}});
  ASSERT_EQ(r.status, 201) << r.body;
  auto j = JsonBody(r);
  EXPECT_TRUE(j["created"]);
  int64_t id = j["contact_id"];
  auto c = server_.app().services().crm->contacts->Get(id);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->email, "grace@example.com");
  EXPECT_EQ(c->first_name, "Grace");
  EXPECT_EQ(c->status, "subscribed");
  EXPECT_EQ(c->type, "customer");
  EXPECT_EQ(c->source, "form:" + std::to_string(form_id_));
  EXPECT_EQ(c->custom_fields["plan"], "pro");
  EXPECT_EQ(c->custom_fields["terms"], true);
  EXPECT_EQ(c->custom_fields["interests"], json({"mail"}));
  std::set<std::string> tags, lists;
  for (const auto& t : c->tags) tags.insert(t.name);
  for (const auto& l : c->lists) lists.insert(l.name);
  EXPECT_EQ(tags, (std::set<std::string>{"web", "footer"}));
  EXPECT_EQ(lists, (std::set<std::string>{"Customers", "Weekly"}));
  EXPECT_EQ(Generated(), 1);

  // A second submission updates the same contact and still counts.
  auto again = server_.PostJson(Submit(), {{"fields", GoodFields("grace@example.com")}});
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_FALSE(JsonBody(again)["created"]);
  EXPECT_EQ(JsonBody(again)["contact_id"], id);
  EXPECT_EQ(Generated(), 2);
}

TEST_F(RestForms, MissingRequiredFieldIs422NamingItAndStoresNothing) {
  json fields = GoodFields("x@example.com");
  fields.erase("first_name");
  fields["terms"] = false;
  auto r = server_.PostJson(Submit(), {{"fields", fields}});
  ASSERT_EQ(r.status, 422) << r.body;
  auto j = JsonBody(r);
  EXPECT_EQ(j["code"], "validation_failed");
  std::set<std::string> named;
  for (const auto& e : j["errors"])
    named.insert(e["field"].get<std::string>() + "/" + e["code"].get<std::string>());
  EXPECT_EQ(named, (std::set<std::string>{"fields.first_name/required", "fields.terms/required"}));
  EXPECT_EQ(Generated(), 0);
  EXPECT_FALSE(server_.app().services().crm->contacts->GetByEmail("x@example.com"));
}

TEST_F(RestForms, ABadAddressIsReportedWithTheOtherFieldErrors) {
  json fields = GoodFields("bad");
  fields["plan"] = "gold";
  auto r = server_.PostJson(Submit(), {{"fields", fields}});
  ASSERT_EQ(r.status, 422) << r.body;
  std::set<std::string> named;
  const json body = JsonBody(r);
  for (const auto& e : body["errors"])
    named.insert(e["field"].get<std::string>() + "/" + e["code"].get<std::string>());
  EXPECT_EQ(named,
            (std::set<std::string>{"fields.email/invalid_email", "fields.plan/invalid_option"}))
      << r.body;
  EXPECT_EQ(Generated(), 0);
}

TEST_F(RestForms, WrongValuesAreRefusedPerField) {
  auto with = [&](const std::string& name, json value) {
    json f = GoodFields("y@example.com");
    f[name] = std::move(value);
    return server_.PostJson(Submit(), {{"fields", f}});
  };
  auto first_error = [](const http::ClientResponse& r) { return JsonBody(r)["errors"][0]; };
  auto dd = with("plan", "enterprise");
  EXPECT_EQ(dd.status, 422);
  EXPECT_EQ(first_error(dd)["field"], "fields.plan");
  EXPECT_EQ(first_error(dd)["code"], "invalid_option");
  EXPECT_EQ(first_error(with("newsletters", json{"Secret"}))["field"], "fields.newsletters");
  EXPECT_EQ(first_error(with("terms", "yes"))["code"], "invalid_type");
  EXPECT_EQ(first_error(with("intro", "text"))["code"], "display_only");
  EXPECT_EQ(first_error(with("favourite_colour", "g"))["code"], "unknown_field");
  auto bad_email = with("email", "grace@@example");
  EXPECT_EQ(bad_email.status, 422);
  EXPECT_EQ(first_error(bad_email)["field"], "fields.email");
  EXPECT_EQ(first_error(bad_email)["code"], "invalid_email");
  auto no_fields = server_.PostJson(Submit(), {{"email", "y@example.com"}});
  EXPECT_EQ(no_fields.status, 422);
  EXPECT_EQ(Generated(), 0);
}

TEST_F(RestForms, UnknownFormIs404AndBadJsonIs400) {
  auto r = server_.PostJson(Url("/form/submit/4242"), {{"fields", GoodFields("z@example.com")}});
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(JsonBody(r)["code"], "form_not_found");
  auto bad = server_.Send("POST", Submit(), "{\"fields\":", {{"Content-Type", "application/json"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(IsProblem(bad));
}

TEST_F(RestForms, HoneypotFilledIsAcceptedButStoresNothing) {
  json f = GoodFields("bot@example.com");
  f["website"] = "http://spam.example";
  auto r = server_.PostJson(Submit(), {{"fields", f}});
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(JsonBody(r)["contact_id"].is_null());
  EXPECT_FALSE(server_.app().services().crm->contacts->GetByEmail("bot@example.com"));
  EXPECT_EQ(Generated(), 0);
  f["website"] = "";  // an empty honeypot is a person
  EXPECT_EQ(server_.PostJson(Submit(), {{"fields", f}}).status, 201);
}

TEST_F(RestForms, CorsAllowsConfiguredOriginsOnly) {
  http::Headers good = {{"Origin", "https://shop.example"}};
  auto pre =
      server_.Send("OPTIONS", Submit(), "",
                   {{"Origin", "https://shop.example"}, {"Access-Control-Request-Method", "POST"}});
  EXPECT_EQ(pre.status, 204);
  EXPECT_EQ(pre.Header("Access-Control-Allow-Origin").value_or(""), "https://shop.example");
  EXPECT_NE(pre.Header("Access-Control-Allow-Methods").value_or("").find("POST"),
            std::string::npos);
  auto ok = server_.PostJson(Submit(), {{"fields", GoodFields("o@example.com")}}, good);
  EXPECT_EQ(ok.status, 201);
  EXPECT_EQ(ok.Header("Access-Control-Allow-Origin").value_or(""), "https://shop.example");
  // Errors carry the CORS headers too, so the page can show them.
  json f = GoodFields("p@example.com");
  f.erase("first_name");
  auto err = server_.PostJson(Submit(), {{"fields", f}}, good);
  EXPECT_EQ(err.status, 422);
  EXPECT_EQ(err.Header("Access-Control-Allow-Origin").value_or(""), "https://shop.example");

  auto evil_pre = server_.Send("OPTIONS", Submit(), "", {{"Origin", "https://evil.example"}});
  EXPECT_EQ(evil_pre.status, 403);
  EXPECT_FALSE(evil_pre.Header("Access-Control-Allow-Origin"));
  auto evil = server_.PostJson(Submit(), {{"fields", GoodFields("q@example.com")}},
                               {{"Origin", "https://evil.example"}});
  EXPECT_EQ(evil.status, 403);
  EXPECT_EQ(JsonBody(evil)["code"], "origin_not_allowed");
  EXPECT_FALSE(server_.app().services().crm->contacts->GetByEmail("q@example.com"));
}

TEST_F(RestForms, RequireKeyFormsRefuseKeylessAndDisabledKeys) {
  auto patch = server_.Send("PATCH", Url("/admin/forms/" + std::to_string(form_id_)),
                            R"({"require_key":true})",
                            {{"Content-Type", "application/json"}, Bearer(admin_)[0]});
  ASSERT_EQ(patch.status, 200) << patch.body;
  EXPECT_EQ(JsonBody(patch)["require_key"], true);
  auto keyless = server_.PostJson(Submit(), {{"fields", GoodFields("k@example.com")}});
  EXPECT_EQ(keyless.status, 401);
  EXPECT_EQ(JsonBody(keyless)["code"], "missing_api_key");
  EXPECT_EQ(server_.Get(Get()).status, 401);
  EXPECT_EQ(
      server_.PostJson(Submit(), {{"fields", GoodFields("k@example.com")}}, Bearer(key_)).status,
      201);
  auto& keys = *server_.app().services().governance->api_keys;
  auto list = keys.List();
  ASSERT_TRUE(list);
  for (const auto& k : *list) {
    if (k.role == governance::ApiKeyRole::kIntegration) {
      ASSERT_TRUE(keys.SetEnabled(k.id, false));
    }
  }
  auto disabled =
      server_.PostJson(Submit(), {{"fields", GoodFields("l@example.com")}}, Bearer(key_));
  EXPECT_EQ(disabled.status, 401);
  EXPECT_EQ(Generated(), 1);
}

TEST_F(RestForms, FiftyConcurrentSubmissionsCountExactly) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  for (int i = 0; i < 50; ++i)
    threads.emplace_back([&, i] {
      // Keyed, as a server-side integration would send them (no per-IP limit). A request
      // that gets no answer counts as failed here rather than ending the process.
      try {
        auto r = server_.PostJson(
            Submit(), {{"fields", GoodFields("u" + std::to_string(i % 40) + "@example.com")}},
            Bearer(key_));
        (r.status == 201 || r.status == 200 ? ok : failed)++;
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        failed++;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 50);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(Generated(), 50);
  auto n = server_.app().services().db->Read([&](store::Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne("SELECT COUNT(*) FROM contacts");
    if (!row) return Fail(row.error());
    return (*row)->Int(0);
  });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 40);
}

class RestFormsLimited : public RestForms {
 protected:
  RestFormsLimited()
      : RestForms({.configure = [](Config& c) { c.form_rate_limit_per_minute = 3; }}) {}
};

TEST_F(RestFormsLimited, KeylessSubmissionsAreLimitedPerIpWithRetryAfter) {
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(
        server_
            .PostJson(Submit(), {{"fields", GoodFields("r" + std::to_string(i) + "@example.com")}})
            .status,
        201);
  auto limited = server_.PostJson(Submit(), {{"fields", GoodFields("r9@example.com")}});
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(JsonBody(limited)["code"], "rate_limited");
  EXPECT_TRUE(limited.Header("Retry-After"));
  // A key is not limited per IP.
  EXPECT_EQ(
      server_.PostJson(Submit(), {{"fields", GoodFields("r9@example.com")}}, Bearer(key_)).status,
      201);
  EXPECT_EQ(Generated(), 4);
}

// trusted_proxies: the per-IP limit counts the client a trusted proxy forwarded, and only
// then (docs/http.md).
class RestFormsBehindProxy : public RestForms {
 protected:
  explicit RestFormsBehindProxy(std::string trusted = "127.0.0.1")
      : RestForms({.configure = [trusted](Config& c) {
          c.form_rate_limit_per_minute = 1;
          c.trusted_proxies = {trusted};
        }}) {}
  int SubmitAs(const std::string& client, const std::string& email) {
    return server_
        .PostJson(Submit(), {{"fields", GoodFields(email)}}, {{"X-Forwarded-For", client}})
        .status;
  }
};

class RestFormsBehindUntrustedProxy : public RestFormsBehindProxy {
 protected:
  RestFormsBehindUntrustedProxy() : RestFormsBehindProxy("10.0.0.0/8") {}
};

TEST_F(RestFormsBehindProxy, PerIpLimitCountsTheForwardedClient) {
  EXPECT_EQ(SubmitAs("198.51.100.1", "p1@example.com"), 201);
  EXPECT_EQ(SubmitAs("198.51.100.1", "p2@example.com"), 429);  // the same client again
  EXPECT_EQ(SubmitAs("198.51.100.2", "p3@example.com"), 201);  // another client, same proxy
  EXPECT_EQ(SubmitAs("203.0.113.5, 198.51.100.2", "p4@example.com"), 429);  // forged left part
  EXPECT_EQ(Generated(), 2);
}

TEST_F(RestFormsBehindUntrustedProxy, PerIpLimitIgnoresForwardingFromAnUntrustedPeer) {
  EXPECT_EQ(SubmitAs("198.51.100.1", "u1@example.com"), 201);
  // A different X-Forwarded-For does not make the loopback peer another client.
  EXPECT_EQ(SubmitAs("198.51.100.2", "u2@example.com"), 429);
  EXPECT_EQ(Generated(), 1);
}

TEST_F(RestForms, AdminDefinitionErrorsNameTheirPaths) {
  json def = SignupForm();
  def["fields"][3]["options"] = "free";
  def["applies"]["lists"] = {"Nope"};
  auto r = server_.PostJson(Url("/admin/forms"), def, Bearer(admin_));
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(JsonBody(r)["errors"][0]["field"], "fields[3].options");
  def = SignupForm();
  def["applies"]["lists"] = {"Nope"};
  auto l = server_.PostJson(Url("/admin/forms"), def, Bearer(admin_));
  EXPECT_EQ(l.status, 422);
  EXPECT_EQ(JsonBody(l)["errors"][0]["field"], "applies.lists[0]");
  def = SignupForm();
  def["fields"].erase(0);  // no Email field
  auto e = server_.PostJson(Url("/admin/forms"), def, Bearer(admin_));
  EXPECT_EQ(e.status, 422);
  EXPECT_EQ(JsonBody(e)["errors"][0]["code"], "email_field");
  EXPECT_EQ(server_.PostJson(Url("/admin/forms"), SignupForm(), Bearer(key_)).status, 403);
  auto list = server_.Get(Url("/admin/forms"), Bearer(admin_));
  EXPECT_EQ(JsonBody(list)["forms"].size(), 1u);
  auto del =
      server_.Send("DELETE", Url("/admin/forms/" + std::to_string(form_id_)), "", Bearer(admin_));
  EXPECT_EQ(del.status, 200);
  EXPECT_EQ(server_.Get(Get()).status, 404);
}

TEST_F(RestForms, FormDoesNotResubscribeAnUnsubscribedContact) {
  auto& contacts = *server_.app().services().crm->contacts;
  crm::ContactInput in;
  in.email = "gone@example.com";
  in.status = "unsubscribed";
  ASSERT_TRUE(contacts.Upsert({.kind = "cli"}, in));
  auto r = server_.PostJson(Submit(), {{"fields", GoodFields("gone@example.com")}});
  ASSERT_EQ(r.status, 200) << r.body;
  auto c = contacts.GetByEmail("gone@example.com");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "unsubscribed");
  EXPECT_EQ(c->first_name, "Grace");  // the rest of the submission applied
  EXPECT_EQ(Generated(), 1);
}

TEST_F(RestForms, AStrangerFillsOnlyWhatAnExistingContactLacks) {
  auto& contacts = *server_.app().services().crm->contacts;
  crm::ContactInput in;
  in.email = "ada@example.com";
  in.first_name = "Ada";
  in.status = "subscribed";
  in.type = "lead";
  in.custom_fields = json{{"plan", "free"}};
  ASSERT_TRUE(contacts.Upsert({.kind = "cli"}, in));
  json f = GoodFields("ada@example.com");
  f["first_name"] = "Mallory";
  f["about"] = "owned";
  auto r = server_.PostJson(Submit(), {{"fields", f}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(JsonBody(r)["created"]);
  auto c = contacts.GetByEmail("ada@example.com");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->first_name, "Ada");                // not renamed on a stranger's word
  EXPECT_EQ(c->custom_fields["plan"], "free");    // nor its fields changed
  EXPECT_EQ(c->custom_fields["about"], "owned");  // an empty field is filled
  EXPECT_EQ(c->type, "lead");
  EXPECT_TRUE(c->tags.empty()) << "the form's tags applied to an existing contact";
  EXPECT_TRUE(c->lists.empty()) << "the form's lists applied to an existing contact";
  EXPECT_EQ(Generated(), 1);

  // With an API key the integration is trusted: add-or-update as before.
  auto keyed = server_.PostJson(Submit(), {{"fields", f}}, Bearer(key_));
  ASSERT_EQ(keyed.status, 200) << keyed.body;
  c = contacts.GetByEmail("ada@example.com");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->first_name, "Mallory");
  EXPECT_EQ(c->custom_fields["plan"], "pro");
  EXPECT_EQ(c->type, "customer");
  EXPECT_EQ(c->tags.size(), 2u);
  EXPECT_EQ(c->lists.size(), 2u);
}

TEST_F(RestForms, LinkAndImageFieldsTakeOnlyWebUrls) {
  for (const char* type : {"Link", "Image"}) {
    for (const char* bad : {"javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x",
                            "//evil.example/x", "https://a.example/x y"}) {
      json def = SignupForm();
      def["fields"][10] = {{"name", "privacy"}, {"type", type}, {"label", bad}};
      auto r = server_.PostJson(Url("/admin/forms"), def, Bearer(admin_));
      EXPECT_EQ(r.status, 422) << type << " " << bad << ": " << r.body;
      EXPECT_EQ(JsonBody(r)["errors"][0]["field"], "fields[10].label") << r.body;
      EXPECT_EQ(JsonBody(r)["errors"][0]["code"], "invalid_url") << r.body;
    }
    json def = SignupForm();
    def["fields"][10] = {{"name", "privacy"}, {"type", type}, {"label", "https://a.example/p"}};
    def["name"] = std::string("ok ") + type;
    auto ok = server_.PostJson(Url("/admin/forms"), def, Bearer(admin_));
    EXPECT_EQ(ok.status, 201) << ok.body;
    // An update is checked the same way.
    auto patch = server_.Send(
        "PATCH", Url("/admin/forms/" + std::to_string(JsonBody(ok)["id"].get<int64_t>())),
        json{{"fields",
              {{{"name", "email"}, {"type", "Email"}},
               {{"name", "l"}, {"type", type}, {"label", "javascript:x"}}}}}
            .dump(),
        {{"Content-Type", "application/json"}, Bearer(admin_)[0]});
    EXPECT_EQ(patch.status, 422) << patch.body;
  }
}

}  // namespace
}  // namespace crmd::resttest

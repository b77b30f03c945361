// The served OpenAPI document and the REST route table describe the same API: every
// route is documented and every documented operation is served.
#include <gtest/gtest.h>

#include <ctime>
#include <set>

#include "src/core/crypto.h"
#include "src/crm/services.h"
#include "src/mcp/json_schema.h"
#include "src/rest/rest_api.h"
#include "tests/integration/rest/rest_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using crmd::testing::TestServer;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

TEST(RestOpenApi, ServedDocumentCoversExactlyTheRoutes) {
  TestServer server;
  auto r = server.Get(std::string(kBase) + "/openapi.json");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type").value_or(""), "application/json");
  auto doc = JsonBody(r);
  EXPECT_EQ(doc["openapi"], "3.1.0");
  EXPECT_EQ(doc["servers"][0]["url"], kBase);

  std::set<std::string> documented;
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [method, op] : item.items())
      if (method != "parameters" && method != "summary" && method != "description")
        documented.insert(Lower(method) + " " + path);

  std::set<std::string> served;
  for (const auto& [method, pattern] : server.app().services().rest_api->Routes())
    served.insert(Lower(method) + " " + pattern);

  ASSERT_GT(served.size(), 10u);
  for (const auto& s : served) EXPECT_TRUE(documented.count(s)) << "undocumented route: " << s;
  for (const auto& d : documented)
    EXPECT_TRUE(served.count(d)) << "documented but not served: " << d;
}

TEST(RestOpenApi, EveryOperationDocumentsItsProblemResponses) {
  TestServer server;
  auto doc = JsonBody(server.Get(std::string(kBase) + "/openapi.json"));
  for (const auto& [method, pattern] : server.app().services().rest_api->Routes()) {
    const auto& op = doc["paths"][pattern][Lower(method)];
    ASSERT_TRUE(op.is_object()) << method << " " << pattern;
    bool has_4xx = false;
    for (const auto& [code, resp] : op["responses"].items()) has_4xx = has_4xx || code[0] == '4';
    EXPECT_TRUE(has_4xx) << method << " " << pattern;
    EXPECT_TRUE(op.contains("operationId")) << method << " " << pattern;
  }
}

// Checks a live answer against the schema the document gives for (path, method, status).
class Conformance {
 public:
  explicit Conformance(nlohmann::json doc) : doc_(std::move(doc)) {}
  void Check(const std::string& path, const std::string& method, const http::ClientResponse& r) {
    SCOPED_TRACE(method + " " + path + " -> " + std::to_string(r.status) + " " +
                 r.body.substr(0, 300));
    auto responses = doc_["paths"][path][method]["responses"];
    ASSERT_TRUE(responses.contains(std::to_string(r.status))) << "undocumented status";
    nlohmann::json resp = responses[std::to_string(r.status)];
    if (resp.contains("$ref")) {
      std::string ref = resp["$ref"];
      resp = doc_["components"]["responses"][ref.substr(ref.rfind('/') + 1)];
    }
    if (!resp.contains("content")) return;
    std::string ctype(r.Header("Content-Type").value_or(""));
    ASSERT_TRUE(resp["content"].contains(ctype)) << "undocumented content type " << ctype;
    nlohmann::json schema = resp["content"][ctype]["schema"];
    schema["components"] = doc_["components"];
    auto compiled = mcp::CompiledSchema::Compile(schema);
    ASSERT_TRUE(compiled) << compiled.error().message;
    auto body = nlohmann::json::parse(r.body, nullptr, false);
    ASSERT_FALSE(body.is_discarded());
    auto violation = (*compiled)->Validate(body);
    EXPECT_FALSE(violation) << violation->message;
    ++checked;
  }
  int checked = 0;

 private:
  nlohmann::json doc_;
};

TEST(RestOpenApi, LiveAnswersMatchTheirDocumentedSchemas) {
  TestServer server;
  auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
  auto key = NewKey(server);
  ASSERT_TRUE(server.app().services().crm->lists->Create({.kind = "cli"}, "Weekly", ""));
  Conformance c(JsonBody(server.Get(std::string(kBase) + "/openapi.json")));
  auto url = [](const std::string& p) { return std::string(kBase) + p; };

  c.Check("/contact", "post",
          server.PostJson(url("/contact"),
                          {{"email", "oa@example.com"},
                           {"tags", {"t"}},
                           {"lists", {"Weekly"}},
                           {"custom_fields", {{"k", 1}}}},
                          Bearer(key)));
  c.Check("/contact", "post",
          server.PostJson(url("/contact"), {{"email", "oa@example.com"}, {"first_name", "O"}},
                          Bearer(key)));
  c.Check("/contact", "post", server.PostJson(url("/contact"), {{"email", "nope"}}, Bearer(key)));
  c.Check("/contact", "post", server.PostJson(url("/contact"), {{"email", "x@example.com"}}));
  c.Check("/contact/{email}", "get", server.Get(url("/contact/oa@example.com"), Bearer(key)));
  c.Check("/contact/{email}", "get", server.Get(url("/contact/none@example.com"), Bearer(key)));

  nlohmann::json form = {{"name", "oa"},
                         {"fields", {{{"name", "email"}, {"type", "Email"}, {"required", true}}}},
                         {"applies", {{"lists", {"Weekly"}}}}};
  auto created = server.PostJson(url("/admin/forms"), form, Bearer(admin));
  c.Check("/admin/forms", "post", created);
  std::string id = JsonBody(created)["public_id"];
  c.Check("/form/get/{form_id}", "get", server.Get(url("/form/get/" + id)));
  c.Check("/form/get/{form_id}", "get", server.Get(url("/form/get/" + id), Bearer(key)));
  c.Check("/form/submit/{form_id}", "post",
          server.PostJson(url("/form/submit/" + id), {{"fields", {{"email", "f@example.com"}}}}));
  c.Check("/form/submit/{form_id}", "post",
          server.PostJson(url("/form/submit/" + id), {{"fields", nlohmann::json::object()}}));
  c.Check("/admin/forms", "get", server.Get(url("/admin/forms"), Bearer(admin)));
  c.Check("/admin/api-keys", "get", server.Get(url("/admin/api-keys"), Bearer(admin)));
  c.Check("/admin/api-keys", "post",
          server.PostJson(url("/admin/api-keys"), {{"name", "n"}}, Bearer(admin)));
  c.Check("/admin/api-keys", "get", server.Get(url("/admin/api-keys"), Bearer(key)));
  c.Check("/contact/delete/{email}", "delete",
          server.Send("DELETE", url("/contact/delete/oa@example.com"), "", Bearer(key)));

  auto hook = server.PostJson(url("/admin/webhooks"),
                              {{"url", "http://127.0.0.1:9/hook"}, {"events", {"contact.created"}}},
                              Bearer(admin));
  c.Check("/admin/webhooks", "post", hook);
  c.Check("/admin/webhooks", "get", server.Get(url("/admin/webhooks"), Bearer(admin)));
  c.Check("/admin/webhook-deliveries", "get",
          server.Get(url("/admin/webhook-deliveries"), Bearer(admin)));
  auto incoming = server.PostJson(
      url("/admin/incoming-hooks"),
      {{"name", "shop"}, {"mapping", {{"email", "data.customer.emails[0].address"}}}},
      Bearer(admin));
  c.Check("/admin/incoming-hooks", "post", incoming);
  c.Check("/admin/incoming-hooks", "get", server.Get(url("/admin/incoming-hooks"), Bearer(admin)));

  const std::string signing_key = "key-openapi-conformance-0123456789";
  auto put_headers = Bearer(admin);
  put_headers.emplace_back("Content-Type", "application/json");
  c.Check("/admin/mail-receivers/{provider}", "put",
          server.Send("PUT", url("/admin/mail-receivers/mailgun"),
                      nlohmann::json{{"signing_key", signing_key}}.dump(), put_headers));
  c.Check("/admin/mail-receivers", "get", server.Get(url("/admin/mail-receivers"), Bearer(admin)));
  nlohmann::json event = {{"event", "failed"},
                          {"id", "evt-openapi"},
                          {"severity", "permanent"},
                          {"recipient", "weekly@example.com"}};
  c.Check("/mail/events/mailgun", "post",
          server.PostJson(url("/mail/events/mailgun"), {{"event-data", event}}));
  const std::string ts = std::to_string(std::time(nullptr)), token = "openapi-token-0123456789";
  c.Check(
      "/mail/events/mailgun", "post",
      server.PostJson(url("/mail/events/mailgun"),
                      {{"signature",
                        {{"timestamp", ts},
                         {"token", token},
                         {"signature", crypto::Hex(crypto::HmacSha256(signing_key, ts + token))}}},
                       {"event-data", event}}));
  EXPECT_EQ(c.checked, 25);
}

}  // namespace
}  // namespace crmd::resttest

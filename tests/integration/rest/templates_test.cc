// REST /templates: create, read, list, change with the revision read (a stale one is 409
// revision_conflict with the current template), merge tags and the {{content}} slot checked
// on save (422 naming the field), the built-in Default (docs/rest.md "Templates").
#include <gtest/gtest.h>

#include "tests/integration/rest/rest_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using crmd::testing::TestServer;
using nlohmann::json;

constexpr const char* kLayout =
    "<html><body><div class=\"frame\">{{content}}</div><p>{{company_address}}</p>"
    "<a href=\"{{unsubscribe_url}}\">Unsubscribe</a></body></html>";

class RestTemplates : public ::testing::Test {
 protected:
  http::ClientResponse Send(const std::string& method, const std::string& path,
                            const json& body = nullptr) {
    http::Headers h = Bearer(key_);
    if (body.is_null()) return server_.Send(method, Url(path), "", h);
    h.push_back({"Content-Type", "application/json"});
    return server_.Send(method, Url(path), body.dump(), h);
  }

  TestServer server_;
  std::string key_ = NewKey(server_);
};

TEST_F(RestTemplates, CreateReadListAndChangeWithTheRevisionRead) {
  auto created = Send("POST", "/templates", {{"name", "Brand"}, {"html", kLayout}});
  ASSERT_EQ(created.status, 201) << created.body;
  json t = JsonBody(created);
  EXPECT_EQ(t["name"], "Brand");
  EXPECT_EQ(t["html"], kLayout);
  EXPECT_EQ(t["text"], "");
  EXPECT_EQ(t["revision"], 1);
  EXPECT_TRUE(t["builtin"].is_null());
  const int64_t id = t["id"];

  auto got = Send("GET", "/templates/" + std::to_string(id));
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(JsonBody(got)["html"], kLayout);

  auto list = Send("GET", "/templates?limit=10");
  ASSERT_EQ(list.status, 200) << list.body;
  json items = JsonBody(list)["templates"];
  ASSERT_EQ(items.size(), 2u) << list.body;  // the built-in Default and this one
  EXPECT_EQ(items[0]["builtin"], "default");
  EXPECT_EQ(items[1]["id"], id);
  EXPECT_FALSE(items[1].contains("html"));  // compact

  auto changed = Send("PUT", "/templates/" + std::to_string(id),
                      {{"revision", 1}, {"name", "Brand 2"}, {"text", "{{content}}\n-- Acme"}});
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(JsonBody(changed)["revision"], 2);
  EXPECT_EQ(JsonBody(changed)["name"], "Brand 2");
  EXPECT_EQ(JsonBody(changed)["html"], kLayout);  // not given: kept

  // Someone who read revision 1 is refused and shown the template as it is now.
  auto stale = Send("PUT", "/templates/" + std::to_string(id), {{"revision", 1}, {"name", "Old"}});
  ASSERT_EQ(stale.status, 409) << stale.body;
  EXPECT_TRUE(IsProblem(stale));
  json problem = JsonBody(stale);
  EXPECT_EQ(problem["code"], "revision_conflict");
  EXPECT_EQ(problem["current"]["revision"], 2);
  EXPECT_EQ(problem["current"]["name"], "Brand 2");
  EXPECT_EQ(JsonBody(Send("GET", "/templates/" + std::to_string(id)))["name"], "Brand 2");

  auto no_revision = Send("PUT", "/templates/" + std::to_string(id), {{"name", "X"}});
  EXPECT_EQ(no_revision.status, 422) << no_revision.body;
  EXPECT_EQ(JsonBody(no_revision)["errors"][0]["field"], "revision");

  auto deleted = Send("DELETE", "/templates/" + std::to_string(id));
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(Send("GET", "/templates/" + std::to_string(id)).status, 404);
  auto gone = Send("PUT", "/templates/" + std::to_string(id), {{"revision", 2}, {"name", "X"}});
  EXPECT_EQ(gone.status, 404) << gone.body;
  EXPECT_EQ(JsonBody(gone)["code"], "template_not_found");
}

TEST_F(RestTemplates, BadMergeTagsAndSlotsAreRefusedNamingTheField) {
  struct Case {
    json body;
    std::string field, says;
  };
  for (const Case& c : {
           Case{{{"name", "T"}, {"html", "<p>{{content}} {{frist_name}}</p>"}},
                "html",
                "unknown merge tag \"frist_name\""},
           Case{{{"name", "T"}, {"html", "<p>no slot</p>"}}, "html", "exactly one {{content}}"},
           Case{{{"name", "T"}, {"html", "{{content}}{{content}}"}}, "html", "found 2"},
           Case{{{"name", "T"}, {"html", "{{content}}"}, {"text", "{{content}} {{first_name"}},
                "text",
                "unclosed merge tag"},
           Case{{{"name", ""}, {"html", "{{content}}"}}, "name", "must not be empty"},
       }) {
    auto r = Send("POST", "/templates", c.body);
    ASSERT_EQ(r.status, 422) << c.body.dump() << " " << r.body;
    json p = JsonBody(r);
    EXPECT_EQ(p["code"], "validation_failed");
    EXPECT_EQ(p["errors"][0]["field"], c.field) << r.body;
    EXPECT_NE(p.value("detail", "").find(c.says), std::string::npos) << r.body;
  }
  auto missing = Send("POST", "/templates", {{"html", "{{content}}"}, {"colour", "red"}});
  ASSERT_EQ(missing.status, 422) << missing.body;
  EXPECT_EQ(JsonBody(missing)["errors"].size(), 2u) << missing.body;  // name, colour
  // Nothing was saved by any of them.
  EXPECT_EQ(JsonBody(Send("GET", "/templates"))["templates"].size(), 1u);
}

TEST_F(RestTemplates, TheBuiltInDefaultHasTheSlotTheAddressAndTheLinks) {
  auto r = Send("GET", "/templates/1");
  ASSERT_EQ(r.status, 200) << r.body;
  json t = JsonBody(r);
  EXPECT_EQ(t["builtin"], "default");
  EXPECT_EQ(t["revision"], 1);
  const std::string html = t["html"];
  for (const char* part : {"{{content}}", "{{company_address}}", "href=\"{{unsubscribe_url}}\"",
                           "prefers-color-scheme:dark", "name=\"viewport\""})
    EXPECT_NE(html.find(part), std::string::npos) << part;
  EXPECT_EQ(html.find("<img"), std::string::npos);  // readable without images
  EXPECT_NE(t["text"].get<std::string>().find("{{unsubscribe_url}}"), std::string::npos);

  // It is edited, never deleted.
  auto kept = Send("DELETE", "/templates/1");
  EXPECT_EQ(kept.status, 409) << kept.body;
  EXPECT_EQ(JsonBody(kept)["code"], "invalid_transition");
  EXPECT_EQ(Send("GET", "/templates/1").status, 200);

  // Saving it stores what was saved.
  auto saved = Send("PUT", "/templates/1", {{"revision", 1}, {"html", kLayout}});
  ASSERT_EQ(saved.status, 200) << saved.body;
  EXPECT_EQ(JsonBody(Send("GET", "/templates/1"))["html"], kLayout);
}

TEST_F(RestTemplates, NeedsAnApiKey) {
  EXPECT_EQ(server_.Get(Url("/templates")).status, 401);
  EXPECT_EQ(Send("GET", "/templates/999").status, 404);
  EXPECT_EQ(Send("GET", "/templates/abc").status, 404);
}

}  // namespace
}  // namespace crmd::resttest

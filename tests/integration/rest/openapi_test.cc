// The served OpenAPI document and the REST route table describe the same API: every
// route is documented and every documented operation is served.
#include <set>

#include <gtest/gtest.h>

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
  for (const auto& d : documented) EXPECT_TRUE(served.count(d)) << "documented but not served: " << d;
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

}  // namespace
}  // namespace crmd::resttest

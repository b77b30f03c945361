#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/integration/rest/rest_fixture.h"
#include "tests/support/raw_http.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

using testing::JsonBody;
using testing::TestServer;

TEST(Health, HealthzAndReadyzAnswerOverLoopback) {
  TestServer server;
  auto h = server.Get("/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(JsonBody(h)["status"], "ok");
  EXPECT_TRUE(h.Header("X-Request-Id").has_value());
  auto r = server.Get("/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(JsonBody(r)["status"], "ready");
}

TEST(Health, UnknownPathIs404AndWrongMethodIs405) {
  TestServer server;
  EXPECT_EQ(server.Get("/nope").status, 404);
  auto r = server.Send("DELETE", "/healthz");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.Header("Allow").value_or(""), "GET, HEAD");
}

TEST(HttpLimits, OversizedBodyIs413BeforeTheBodyIsRead) {
  TestServer server({.configure = [](Config& c) { c.max_body_bytes = 1024; }});
  auto r = server.Send("POST", "/healthz", std::string(4096, 'x'));
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.Header("Content-Type").value_or(""), "application/problem+json");
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.body;
  EXPECT_EQ(j["status"], 413);
  EXPECT_EQ(j["code"], "payload_too_large");
}

// docs/rest.md "Errors": a REST client gets one problem shape for a 413 whether the REST
// layer (over rest_max_body_bytes) or the listener (over max_body_bytes, before the body
// is read) refuses it, and the listener's 421 has it too: instance and request_id, with
// the same id in X-Request-Id. The listener adds "error" (docs/http.md).
TEST(HttpLimits, ListenerRefusalsHaveTheRestProblemShapeWithARequestId_Rfc9457_3_1) {
  TestServer server({.configure = [](Config& c) {
    c.max_body_bytes = 4096;
    c.rest_max_body_bytes = 1024;
  }});
  const std::string path = resttest::Url("/contact");
  const http::Headers json_type = {{"Content-Type", "application/json"},
                                   resttest::Bearer(resttest::NewKey(server))[0]};
  auto rest = server.Send("POST", path, std::string(2048, ' '), json_type);
  auto listener = server.Send("POST", path, std::string(8192, ' '), json_type);
  auto misdirected = testing::RoundTrip(testing::PortOf(server.base_url()),
                                        "GET /healthz HTTP/1.1\r\nHost: zqx.example\r\n\r\n");
  ASSERT_TRUE(misdirected.has_value());
  ASSERT_EQ(rest.status, 413) << rest.body;
  ASSERT_EQ(listener.status, 413) << listener.body;
  ASSERT_EQ(misdirected->status, 421) << misdirected->body;

  auto rest_body = nlohmann::json::parse(rest.body, nullptr, false);
  ASSERT_TRUE(rest_body.is_object()) << rest.body;
  struct Answer {
    std::string name;
    std::string request_id_header;
    std::string content_type;
    std::string body;
  };
  for (const Answer& a : {
           Answer{"listener 413", std::string(listener.Header("X-Request-Id").value_or("")),
                  std::string(listener.Header("Content-Type").value_or("")), listener.body},
           Answer{"listener 421", std::string(misdirected->Header("X-Request-Id").value_or("")),
                  std::string(misdirected->Header("Content-Type").value_or("")), misdirected->body},
       }) {
    EXPECT_EQ(a.content_type, "application/problem+json") << a.name;
    auto j = nlohmann::json::parse(a.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << a.name << ": " << a.body;
    for (const auto& [member, value] : rest_body.items())
      EXPECT_TRUE(j.contains(member)) << a.name << " lacks " << member << ": " << a.body;
    for (const auto& [member, value] : j.items())
      EXPECT_TRUE(rest_body.contains(member) || member == "error")
          << a.name << " has undocumented " << member << ": " << a.body;
    EXPECT_FALSE(a.request_id_header.empty()) << a.name << " has no X-Request-Id";
    EXPECT_EQ(j.value("request_id", ""), a.request_id_header) << a.name;
    EXPECT_EQ(j.value("instance", ""), "urn:crmd:request:" + a.request_id_header) << a.name;
    EXPECT_EQ(j.value("error", ""), j.value("code", "")) << a.name;
  }
  EXPECT_EQ(JsonBody(listener)["code"], rest_body["code"]);
}

TEST(HttpLimits, OversizedHeadersAre431) {
  TestServer server({.configure = [](Config& c) { c.max_header_bytes = 2048; }});
  auto r = server.Get("/healthz", {{"X-Big", std::string(4096, 'a')}});
  EXPECT_EQ(r.status, 431);
}

}  // namespace
}  // namespace crmd

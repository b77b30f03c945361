#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

TEST(HttpLimits, OversizedHeadersAre431) {
  TestServer server({.configure = [](Config& c) { c.max_header_bytes = 2048; }});
  auto r = server.Get("/healthz", {{"X-Big", std::string(4096, 'a')}});
  EXPECT_EQ(r.status, 431);
}

}  // namespace
}  // namespace crmd

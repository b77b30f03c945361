// What a handler sees of a request that passed the listener's RFC 9112 checks: the
// http::Server on its own with a handler that echoes the request back.
#include <gtest/gtest.h>

#include "src/http/server.h"
#include "tests/support/raw_http.h"

namespace crmd::http {
namespace {

Response Echo(const Request& req) {
  std::string out =
      req.method + " " + req.target + " path=" + req.path + " query=" + req.query + "\n";
  for (const auto& [k, v] : req.headers) out += k + ": " + v + "\n";
  out += "body=" + req.body;
  return Response::Text(200, out);
}

class RequestView : public ::testing::Test {
 protected:
  void SetUp() override {
    auto port = server_.Start();
    ASSERT_TRUE(port.has_value());
    port_ = *port;
  }
  void TearDown() override { server_.Stop(); }
  std::string Body(std::string_view request) {
    auto r = testing::RoundTrip(port_, request);
    EXPECT_TRUE(r.has_value());
    if (!r) return "";
    EXPECT_EQ(r->status, 200) << r->body;
    return r->body;
  }

  Server server_{{.port = 0, .access_log = false}, Echo};
  uint16_t port_ = 0;
};

TEST_F(RequestView, AbsoluteFormBecomesOriginFormAndHostComesFromTheTarget_Rfc9112_3_2_2) {
  auto body =
      Body("GET http://crm.example.com:8443/a/b?x=1 HTTP/1.1\r\nHost: other.example\r\n\r\n");
  EXPECT_NE(body.find("GET /a/b?x=1 path=/a/b query=x=1\n"), std::string::npos) << body;
  EXPECT_NE(body.find("Host: crm.example.com:8443\n"), std::string::npos) << body;
  EXPECT_EQ(body.find("other.example"), std::string::npos) << body;
}

TEST_F(RequestView, AbsoluteFormWithoutPathIsTheRoot_Rfc9112_3_2_2) {
  auto body = Body("GET http://crm.example.com?q HTTP/1.1\r\nHost: crm.example.com\r\n\r\n");
  EXPECT_NE(body.find("GET /?q path=/ query=q\n"), std::string::npos) << body;
}

TEST_F(RequestView, TrailerFieldsAreNotMergedIntoTheHeaders_Rfc9112_7_1_2) {
  auto body = Body(
      "POST /t HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n0\r\nAuthorization: Bearer smuggled\r\nHost: evil.example\r\n\r\n");
  EXPECT_NE(body.find("body=hello"), std::string::npos) << body;
  EXPECT_EQ(body.find("smuggled"), std::string::npos) << body;
  EXPECT_EQ(body.find("evil.example"), std::string::npos) << body;
}

TEST_F(RequestView, HigherMinorVersionIsHandledAsHttp11_Rfc9110_6_2) {
  testing::RawConnection c(port_);
  c.Send("GET /v HTTP/1.9\r\nHost: 127.0.0.1\r\n\r\nGET /w HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  auto a = c.Read();
  auto b = c.Read();  // persistent, as HTTP/1.1
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->version, "HTTP/1.1");
  EXPECT_NE(b->body.find("GET /w"), std::string::npos);
}

}  // namespace
}  // namespace crmd::http

// ResponseHead: the bytes the server writes before a handler's content (RFC 9112 §4, §5).
#include "src/http/server_text.h"

#include <gtest/gtest.h>

#include "src/http/request_checks.h"

namespace crmd::http {
namespace {

ResponseFraming Framing() {
  return {.reason = "OK", .date = "Fri, 27 Nov 2026 22:00:00 GMT", .request_id = "abc-1"};
}

TEST(ResponseHead, StatusLineHandlerFieldsThenTheServersOwn_Rfc9112_4_5) {
  Response res = Response::Text(200, "{\"a\":1}", "application/json");
  res.Set("Cache-Control", "no-store");
  auto head = ResponseHead(res, Framing());
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(*head,
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: application/json\r\n"
            "Cache-Control: no-store\r\n"
            "Server: crmd\r\n"
            "Date: Fri, 27 Nov 2026 22:00:00 GMT\r\n"
            "X-Request-Id: abc-1\r\n"
            "Content-Length: 7\r\n"
            "\r\n");
}

TEST(ResponseHead, CloseHttp10KeepAliveAndTls_Rfc9112_9_3_Rfc6797_7_1) {
  Response res = Response::Text(404, "", "text/plain");
  auto f = Framing();
  f.reason = "Not Found";
  f.close = true;
  f.tls = true;
  EXPECT_EQ(*ResponseHead(res, f),
            "HTTP/1.1 404 Not Found\r\n"
            "Content-Type: text/plain\r\n"
            "Server: crmd\r\n"
            "Date: Fri, 27 Nov 2026 22:00:00 GMT\r\n"
            "X-Request-Id: abc-1\r\n"
            "Strict-Transport-Security: max-age=31536000\r\n"
            "Connection: close\r\n"
            "Content-Length: 0\r\n"
            "\r\n");
  f.close = false;
  f.tls = false;
  f.http10_keep_alive = true;
  auto head = *ResponseHead(res, f);
  EXPECT_NE(head.find("\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"), std::string::npos)
      << head;
  EXPECT_EQ(head.find("Strict-Transport-Security"), std::string::npos);
}

TEST(ResponseHead, HeadSaysTheGetLengthAndNoContentStatusesSayNone_Rfc9110_9_3_2_8_6) {
  Response res = Response::Text(200, std::string(1234, 'x'));
  auto f = Framing();
  f.head = true;
  EXPECT_NE(ResponseHead(res, f)->find("\r\nContent-Length: 1234\r\n"), std::string::npos);
  for (int status : {100, 204, 304}) {
    Response empty = Response::Empty(status);
    auto head = *ResponseHead(empty, Framing());
    EXPECT_EQ(head.find("Content-Length"), std::string::npos) << head;
    EXPECT_EQ(head.substr(0, 13), "HTTP/1.1 " + std::to_string(status) + " ") << head;
    EXPECT_FALSE(NoContent(200));
    EXPECT_TRUE(NoContent(status));
  }
}

TEST(ResponseHead, FieldsTheServerOwnsAreDroppedAndSameNamesKeptTogether) {
  Response res = Response::Empty(200);
  res.headers = {{"Vary", "Origin"},
                 {"Content-Length", "999"},
                 {"server", "evil"},
                 {"Allow", "GET"},
                 {"Transfer-Encoding", "chunked"},
                 {"vary", "Accept"},
                 {"Connection", "upgrade"},
                 {"Date", "yesterday"},
                 {"X-Request-Id", "forged"},
                 {"Strict-Transport-Security", "max-age=1"}};
  EXPECT_EQ(*ResponseHead(res, Framing()),
            "HTTP/1.1 200 OK\r\n"
            "Vary: Origin\r\n"
            "vary: Accept\r\n"
            "Allow: GET\r\n"
            "Strict-Transport-Security: max-age=1\r\n"
            "Server: crmd\r\n"
            "Date: Fri, 27 Nov 2026 22:00:00 GMT\r\n"
            "X-Request-Id: abc-1\r\n"
            "Content-Length: 0\r\n"
            "\r\n");
  // On TLS the server's own HSTS replaces a handler's.
  auto f = Framing();
  f.tls = true;
  auto head = *ResponseHead(res, f);
  EXPECT_EQ(head.find("max-age=1\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("Strict-Transport-Security: max-age=31536000\r\n"), std::string::npos);
}

TEST(ResponseHead, AFieldThatWouldSplitTheHeaderIsNeverWritten_Rfc9110_5_5) {
  for (auto [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"Location", "/a\r\nSet-Cookie: x=1"},
                                                        {"Location", "/a\nSet-Cookie: x=1"},
                                                        {"Location", "/a\rb"},
                                                        {"Location", std::string("/a\0b", 4)},
                                                        {"Bad Name", "v"},
                                                        {"Bad:Name", "v"},
                                                        {"", "v"},
                                                        {"Vary", "ok"}}) {
    Response res = Response::Empty(302);
    res.headers.emplace_back("Vary", "first");
    res.headers.emplace_back(name, value);
    auto head = ResponseHead(res, Framing());
    if (name == "Vary" && value == "ok") {
      ASSERT_TRUE(head.has_value());
      EXPECT_NE(head->find("Vary: first\r\nVary: ok\r\n"), std::string::npos) << *head;
    } else {
      EXPECT_FALSE(head.has_value()) << name << ": " << value;
    }
  }
  Response res = Response::Empty(200);
  res.status = 1000;
  EXPECT_FALSE(ResponseHead(res, Framing()).has_value());
}

std::string_view Reason(int status) { return status == 500 ? "Internal Server Error" : "OK"; }

TEST(FrameAnswer, ContentUpTo64KiBFollowsTheHeadALargerOneIsWrittenNext) {
  for (size_t n : {size_t{0}, size_t{65536}, size_t{65537}}) {
    Response res = Response::Text(200, std::string(n, 'x'));
    auto wire = FrameAnswer(res, Framing(), Reason);
    EXPECT_FALSE(wire.replaced);
    EXPECT_EQ(wire.content_follows, n > 65536) << n;
    EXPECT_EQ(wire.bytes, *ResponseHead(res, Framing()) + (n > 65536 ? "" : res.body)) << n;
  }
  Response res = Response::Text(200, "zzz-content");
  auto f = Framing();
  f.head = true;
  auto wire = FrameAnswer(res, f, Reason);
  EXPECT_FALSE(wire.content_follows);
  EXPECT_EQ(wire.bytes.find("zzz-content"), std::string::npos);
}

TEST(FrameAnswer, AFieldThatCannotBeSentMakesA500) {
  Response res = Response::Empty(302);
  res.Set("Location", "/a\r\nSet-Cookie: x=1");
  auto wire = FrameAnswer(res, Framing(), Reason);
  EXPECT_TRUE(wire.replaced);
  EXPECT_EQ(res.status, 500);
  EXPECT_EQ(wire.bytes.rfind("HTTP/1.1 500 Internal Server Error\r\n", 0), 0u) << wire.bytes;
  EXPECT_EQ(wire.bytes.find("Set-Cookie"), std::string::npos);
}

TEST(ProblemBody, IsProblemJsonWithTheDetailEscaped_Rfc9457) {
  EXPECT_EQ(
      ProblemBody(431, "headers_too_large", "say \"no\"", "abc-7"),
      R"({"type":"urn:crmd:problem:headers_too_large","title":")" + std::string(StatusTitle(431)) +
          R"(","status":431,"code":"headers_too_large","error":"headers_too_large","detail":"say \"no\"",)"
          R"("instance":"urn:crmd:request:abc-7","request_id":"abc-7"})");
}

TEST(HttpDateCache, FormatsEachSecondOnceAndFollowsTheClock_Rfc9110_6_6_1) {
  using namespace std::chrono;
  HttpDateCache cache;
  const system_clock::time_point t0 = sys_days{year{2026} / 11 / 27} + hours{22};
  std::string_view first = cache.At(t0);
  EXPECT_EQ(first, "Fri, 27 Nov 2026 22:00:00 GMT");
  const char* storage = first.data();
  // Later in the same second: the same text, not formatted again.
  EXPECT_EQ(cache.At(t0 + milliseconds(999)), "Fri, 27 Nov 2026 22:00:00 GMT");
  EXPECT_EQ(cache.At(t0 + milliseconds(999)).data(), storage);
  // The next second, and a clock set back: each says its own second.
  EXPECT_EQ(cache.At(t0 + seconds(1)), "Fri, 27 Nov 2026 22:00:01 GMT");
  EXPECT_EQ(cache.At(t0 - hours(24)), "Thu, 26 Nov 2026 22:00:00 GMT");
  EXPECT_EQ(cache.At(t0 + days(366)), HttpDate(t0 + days(366)));
}

TEST(LoggablePath, TheRemainderAfterASecretPrefixIsRedacted) {
  const std::vector<std::string> secret = {"/u/", "/t/c/", "/console/approvals/"};
  EXPECT_EQ(LoggablePath("/u/MTI6dW5zdWI.c2lnbmF0dXJl", secret), "/u/[redacted]");
  EXPECT_EQ(LoggablePath("/t/c/abc.def/extra", secret), "/t/c/[redacted]");
  EXPECT_EQ(LoggablePath("/console/approvals/Zm9vYmFy", secret), "/console/approvals/[redacted]");
  // The prefix alone, a longer word and the list page are not secrets.
  EXPECT_EQ(LoggablePath("/u/", secret), "/u/");
  EXPECT_EQ(LoggablePath("/users/1", secret), "/users/1");
  EXPECT_EQ(LoggablePath("/console/approvals", secret), "/console/approvals");
  EXPECT_EQ(LoggablePath("/mcp", secret), "/mcp");
}

TEST(LoggablePath, AnIncomingWebhookTokenKeepsOnlyItsVisiblePrefix) {
  const std::string token = "crmd_hook_AbCdEfGh_" + std::string(43, 'x');
  EXPECT_EQ(LoggablePath("/api/crm/v1/hooks/" + token, {}),
            "/api/crm/v1/hooks/crmd_hook_AbCdEfGh_[redacted]");
  EXPECT_EQ(LoggablePath("/api/crm/v1/hooks/crmd_hook_", {}), "/api/crm/v1/hooks/crmd_hook_");
}

}  // namespace
}  // namespace crmd::http

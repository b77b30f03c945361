// The pure checks behind the listener (src/http/request_checks.h), one rule per test; the
// wire-level behaviour is in tests/integration/http/rfc9112_test.cc.
#include "src/http/request_checks.h"

#include <gtest/gtest.h>

namespace crmd::http {
namespace {

tl::expected<HeaderBlock, Rejection> Scan(std::string& bytes, size_t limit = 200) {
  return ScanHeaderBlock({bytes.data(), bytes.size()}, limit);
}

int ScanStatus(std::string bytes, size_t limit = 200) {
  auto r = Scan(bytes, limit);
  return r ? (r->size ? 0 : -1) : r.error().status;  // 0: complete, -1: needs more
}

RequestHead Head(std::string_view method, std::string_view target, unsigned version,
                 std::vector<std::pair<std::string_view, std::string_view>> fields) {
  return {.method = method, .target = target, .version = version, .fields = std::move(fields)};
}

int CheckStatus(const RequestHead& head) {
  auto r = CheckRequestHead(head);
  return r ? 0 : r.error().status;
}

TEST(ScanHeaderBlock, FindsTheHeaderSectionAndLeavesTheBody_Rfc9112_2_1) {
  std::string bytes = "GET / HTTP/1.1\r\nHost: a\r\n\r\nbody\nwith LF";
  auto r = Scan(bytes);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->skip, 0u);
  EXPECT_EQ(r->size, bytes.find("body"));
}

TEST(ScanHeaderBlock, SkipsEmptyLinesBeforeTheRequestLine_Rfc9112_2_2) {
  std::string bytes = "\r\n\r\nGET / HTTP/1.1\r\n\r\n";
  auto r = Scan(bytes);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->skip, 4u);
  EXPECT_EQ(r->size, bytes.size() - 4);
}

TEST(ScanHeaderBlock, NeedsMoreUntilTheEmptyLine) {
  EXPECT_EQ(ScanStatus("GET / HTTP/1.1\r\nHost: a\r\n"), -1);
  EXPECT_EQ(ScanStatus("GET / HT"), -1);
  EXPECT_EQ(ScanStatus(""), -1);
}

TEST(ScanHeaderBlock, RefusesBareLf_Rfc9112_2_2) {
  EXPECT_EQ(ScanStatus("GET / HTTP/1.1\nHost: a\r\n"), 400);
  EXPECT_EQ(ScanStatus("\nGET / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(ScanStatus("GET / HTTP/1.1\r\nHost: a\r\n\n"), 400);
}

TEST(ScanHeaderBlock, RefusesWhitespaceBeforeTheFirstField_Rfc9112_2_2) {
  EXPECT_EQ(ScanStatus("GET / HTTP/1.1\r\n Host: a\r\n\r\n"), 400);
}

TEST(ScanHeaderBlock, RefusesObsFold_Rfc9112_5_2) {
  std::string bytes = "GET / HTTP/1.1\r\nA: b\r\n\tc\r\n\r\n";
  auto r = Scan(bytes);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "obs_fold");
}

TEST(ScanHeaderBlock, OverlongRequestLineIs414AndHeaderSectionIs431_Rfc9112_3) {
  EXPECT_EQ(ScanStatus("GET /" + std::string(300, 'a')), 414);
  EXPECT_EQ(ScanStatus("GET / HTTP/1.1\r\nA: " + std::string(300, 'a')), 431);
  EXPECT_EQ(ScanStatus("GET / HTTP/1.1\r\nA: " + std::string(300, 'a') + "\r\n\r\n"), 431);
}

TEST(ScanHeaderBlock, MajorVersionOtherThanOneIs505_Rfc9112_2_3) {
  EXPECT_EQ(ScanStatus("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 505);
  EXPECT_EQ(ScanStatus("GET / HTTP/0.9\r\n\r\n"), 505);
}

TEST(ScanHeaderBlock, HigherMinorVersionIsRewrittenTo11_Rfc9110_6_2) {
  std::string bytes = "GET / HTTP/1.5\r\n\r\n";
  ASSERT_TRUE(Scan(bytes).has_value());
  EXPECT_EQ(bytes, "GET / HTTP/1.1\r\n\r\n");
}

TEST(HostValue, AcceptsUriHostWithOptionalPort_Rfc9112_3_2) {
  for (auto v :
       {"", "a", "a.example:80", "127.0.0.1", "[::1]", "[::1]:8080", "[v7.x:y]", "a%41", "a:"})
    EXPECT_TRUE(IsValidHostValue(v)) << v;
  for (auto v : {"a b", "a/b", "u@h", "[::1", "[::g]", "[fe80::1%25eth0]", ":80", "a:8x", "a%4",
                 "a:1:2", "[v.x]"})
    EXPECT_FALSE(IsValidHostValue(v)) << v;
}

TEST(CheckRequestHead, HostIsRequiredOnceIn11_Rfc9112_3_2) {
  EXPECT_EQ(CheckStatus(Head("GET", "/", 11, {})), 400);
  EXPECT_EQ(CheckStatus(Head("GET", "/", 10, {})), 0);
  EXPECT_EQ(CheckStatus(Head("GET", "/", 10, {{"Host", "a"}, {"host", "a"}})), 400);
  EXPECT_EQ(CheckStatus(Head("GET", "/", 11, {{"Host", "a b/c@@"}})), 400);
}

TEST(CheckRequestHead, AbsoluteFormGivesTheHost_Rfc9112_3_2_2) {
  auto r = CheckRequestHead(Head("GET", "https://b.example:8443?x", 11, {{"Host", "a"}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->target, "/?x");
  EXPECT_EQ(r->host, "b.example:8443");
  EXPECT_TRUE(r->absolute_form);
  EXPECT_EQ(CheckStatus(Head("GET", "http://u@b/", 11, {{"Host", "b"}})), 400);
  EXPECT_EQ(CheckStatus(Head("GET", "http:///x", 11, {{"Host", "b"}})), 400);
  EXPECT_EQ(CheckStatus(Head("GET", "mailto://b/x", 11, {{"Host", "b"}})), 400);
}

TEST(CheckRequestHead, SaysWhetherTheRequestNamesAHost_Rfc9112_3_2) {
  // allowed_hosts is not applied to an HTTP/1.0 request that names no host.
  auto none = CheckRequestHead(Head("GET", "/", 10, {}));
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_host);
  auto empty = CheckRequestHead(Head("GET", "/", 11, {{"Host", ""}}));
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->has_host);
  EXPECT_EQ(empty->host, "");
  auto absolute = CheckRequestHead(Head("GET", "http://b/", 10, {}));
  ASSERT_TRUE(absolute.has_value());
  EXPECT_TRUE(absolute->has_host);
}

TEST(CheckRequestHead, TargetFormsPerMethod_Rfc9112_3_2_3_3_2_4) {
  EXPECT_EQ(CheckStatus(Head("OPTIONS", "*", 11, {{"Host", "a"}})), 0);
  EXPECT_EQ(CheckStatus(Head("GET", "*", 11, {{"Host", "a"}})), 400);
  EXPECT_EQ(CheckStatus(Head("CONNECT", "a:443", 11, {{"Host", "a:443"}})), 501);
  EXPECT_EQ(CheckStatus(Head("CONNECT", "/", 11, {{"Host", "a"}})), 400);
  EXPECT_EQ(CheckStatus(Head("GET", "a:443", 11, {{"Host", "a"}})), 400);
  EXPECT_EQ(CheckStatus(Head("GET", "/a#f", 11, {{"Host", "a"}})), 400);
}

TEST(CheckRequestHead, TransferEncoding_Rfc9112_6_1_6_3) {
  auto te = [](std::string_view v, unsigned version = 11) {
    return CheckStatus(Head("POST", "/", version, {{"Host", "a"}, {"Transfer-Encoding", v}}));
  };
  EXPECT_EQ(te("chunked"), 0);
  EXPECT_EQ(te("Chunked"), 0);
  EXPECT_EQ(te(" , chunked"), 0);  // empty list elements are ignored (RFC 9110 §5.6.1)
  EXPECT_EQ(te("gzip, chunked"), 501);
  EXPECT_EQ(te("chunked, gzip"), 400);
  EXPECT_EQ(te("xchunked"), 400);
  EXPECT_EQ(te("chunked, chunked"), 400);
  EXPECT_EQ(te("chunked;x=1"), 400);
  EXPECT_EQ(te(""), 400);
  EXPECT_EQ(te("chunked", 10), 400);
  EXPECT_EQ(CheckStatus(
                Head("POST", "/", 11,
                     {{"Host", "a"}, {"Transfer-Encoding", "xchunked"}, {"Content-Length", "5"}})),
            400);
}

TEST(CheckRequestHead, Expect_Rfc9110_10_1_1) {
  auto r = CheckRequestHead(Head("POST", "/", 11, {{"Host", "a"}, {"Expect", "100-CONTINUE"}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->expect_continue);
  auto old = CheckRequestHead(Head("POST", "/", 10, {{"Expect", "100-continue"}}));
  ASSERT_TRUE(old.has_value());
  EXPECT_FALSE(old->expect_continue);  // MUST be ignored in HTTP/1.0
  EXPECT_EQ(CheckStatus(Head("POST", "/", 11, {{"Host", "a"}, {"Expect", "x"}})), 417);
}

// ParsePlainHead: the server's own parse of a plain header section. The fuzz target
// (tests/fuzz/http_request_fuzz.cc) checks it against Beast's parser on random input.
TEST(ParsePlainHead, ReadsTheRequestLineAndTheFieldsInWireOrder_Rfc9112_3_5) {
  auto p = ParsePlainHead(
      "POST /mcp?x=1 HTTP/1.1\r\nHost: a:8080\r\nContent-Type:application/json \r\n"
      "Authorization: \tBearer abc\t\r\nContent-Length: 17\r\nX-Empty:\r\n\r\n",
      1024);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->head.method, "POST");
  EXPECT_EQ(p->head.target, "/mcp?x=1");
  EXPECT_EQ(p->head.version, 11u);
  ASSERT_EQ(p->head.fields.size(), 5u);
  EXPECT_EQ(p->head.fields[0], (std::pair<std::string_view, std::string_view>("Host", "a:8080")));
  EXPECT_EQ(p->head.fields[1].second, "application/json");  // OWS trimmed (§5.1)
  EXPECT_EQ(p->head.fields[2].second, "Bearer abc");
  EXPECT_EQ(p->head.fields[4], (std::pair<std::string_view, std::string_view>("X-Empty", "")));
  EXPECT_EQ(p->content_length, 17u);
  EXPECT_TRUE(p->keep_alive);
}

TEST(ParsePlainHead, KeepAliveAsHttp11AndHttp10Say_Rfc9112_9_3) {
  auto keep = [](std::string_view head) {
    auto p = ParsePlainHead(head, 1024);
    EXPECT_TRUE(p.has_value()) << head;
    return p && p->keep_alive;
  };
  EXPECT_TRUE(keep("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.1\r\nHost: a\r\nconnection: Foo, CLOSE\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.0\r\n\r\n"));
  EXPECT_TRUE(keep("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
  auto p = ParsePlainHead("GET / HTTP/1.0\r\n\r\n", 1024);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->head.version, 10u);
  EXPECT_TRUE(p->head.fields.empty());
  EXPECT_EQ(p->content_length, 0u);
}

TEST(ParsePlainHead, LeavesEverythingElseToBeast) {
  for (std::string_view head : {
           "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n",
           "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1025\r\n\r\n",  // over the body limit
           "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nConnection: x\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nConnection: \"close\"\r\n\r\n",
           "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: caf\xc3\xa9\r\n\r\n",  // obs-text in a value
           "GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n",
           "GET / HTTP/1.1\r\nBad Name: a\r\n\r\n",
           "GET / HTTP/1.1\r\n: a\r\n\r\n",
           "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
           "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
           "GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n",
           "GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
           "GET / HTTP/2.0\r\nHost: a\r\n\r\n",
           "GET / HTTP/1.1 \r\nHost: a\r\n\r\n",
           "GET /\r\nHost: a\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\n\r\nextra",
       }) {
    EXPECT_FALSE(ParsePlainHead(head, 1024).has_value()) << head;
  }
  EXPECT_TRUE(ParsePlainHead("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1024\r\n\r\n", 1024));
}

TEST(ParsePlainHead, EveryByteOfALongValueIsChecked_Rfc9110_5_5) {
  // Values are checked eight bytes at a time: a byte Beast would have to judge is found
  // at every position of a long value, and every visible byte and HTAB passes.
  std::string visible;
  for (int c = 0x20; c <= 0x7E; ++c) visible.push_back(static_cast<char>(c));
  visible += "\t";
  auto head = [](const std::string& value) {
    return "GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + value + "\r\n\r\n";
  };
  const std::string plain = head("v" + visible + "v");  // outlives the views into it
  auto ok = ParsePlainHead(plain, 1024);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->head.fields[1].second, "v" + visible + "v");
  for (char bad : {'\x00', '\x01', '\x08', '\x0b', '\x1f', '\x7f', '\x80', '\xc3', '\xff'}) {
    for (size_t at = 0; at < 40; ++at) {
      std::string value(40, 'x');
      value[at] = bad;
      EXPECT_FALSE(ParsePlainHead(head("v" + value + "v"), 1024).has_value())
          << "byte " << static_cast<int>(static_cast<unsigned char>(bad)) << " at " << at;
    }
  }
}

}  // namespace
}  // namespace crmd::http

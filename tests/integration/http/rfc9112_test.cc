// Every server MUST of RFC 9112 (and the request-handling MUSTs of RFC 9110) over raw
// sockets against a real crmd on port 0: the status, whether the connection is closed
// afterwards (a further request on the same socket gets end-of-stream, not an answer), and
// that crmd still answers /healthz on a new connection. docs/http.md says which rule Beast
// enforces and which one src/http/request_checks.cc does.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/raw_http.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

using testing::RawConnection;
using testing::RawResponse;

// Every request carries this word somewhere; no error answer may echo it.
constexpr std::string_view kMarker = "ZQXMARK";

class Rfc9112 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new testing::TestServer(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static uint16_t Port() { return testing::PortOf(server_->base_url()); }

  // Sends `request` on a fresh connection and checks the answer's status and whether the
  // connection is closed after it; then that a new connection is still served.
  static std::optional<RawResponse> Expect(std::string_view request, int status, bool closed) {
    RawConnection c(Port());
    EXPECT_TRUE(c.connected());
    c.Send(request);
    auto r = c.Read();
    EXPECT_TRUE(r.has_value()) << "no answer";
    if (!r) return r;
    EXPECT_EQ(r->status, status) << r->head << "\n\n" << r->body;
    EXPECT_EQ(r->version, "HTTP/1.1");
    if (status >= 400 && closed) {
      // Answered by the listener itself: problem JSON that does not echo the request, with
      // the request id it gave the refused request.
      EXPECT_EQ(r->Header("Content-Type").value_or(""), "application/problem+json");
      auto j = nlohmann::json::parse(r->body, nullptr, false);
      EXPECT_TRUE(j.is_object()) << r->body;
      if (j.is_object()) {
        EXPECT_EQ(j.value("status", 0), status) << r->body;
        EXPECT_EQ(j.value("request_id", ""), r->Header("X-Request-Id").value_or("?")) << r->body;
      }
      EXPECT_EQ(r->body.find(kMarker), std::string::npos) << r->body;
      EXPECT_EQ(r->Header("Connection").value_or(""), "close");
    }
    EXPECT_EQ(c.Closed(), closed) << (closed ? "the connection stayed open"
                                             : "the connection was closed");
    EXPECT_EQ(StillServes(), 200);
    return r;
  }

  static int StillServes() {
    auto r = testing::RoundTrip(Port(), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    return r ? r->status : 0;
  }

  static testing::TestServer* server_;
};

testing::TestServer* Rfc9112::server_ = nullptr;

// ---- §2.2 message parsing -------------------------------------------------------------

TEST_F(Rfc9112, BareCrInAFieldValueIs400AndCloses_2_2) {
  Expect("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ZQXMARK\rb\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, BareCrInTheRequestLineIs400AndCloses_2_2) {
  Expect("GET /healthz?ZQXMARK\r HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, BareLfIs400AtOnceAndCloses_2_2) {
  // Answered at once (Beast alone would wait for CRLFCRLF until the read timeout).
  Expect("GET /healthz HTTP/1.1\nHost: 127.0.0.1\nX-A: ZQXMARK\n\n", 400, true);
  Expect("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\nX-A: ZQXMARK\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, EmptyLinesBeforeTheRequestLineAreIgnored_2_2) {
  Expect("\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200, false);
}

TEST_F(Rfc9112, WhitespaceBeforeTheFirstFieldIs400AndCloses_2_2) {
  Expect("GET /healthz HTTP/1.1\r\n Host: 127.0.0.1\r\nX-A: ZQXMARK\r\n\r\n", 400, true);
}

// ---- §2.3 HTTP version ------------------------------------------------------------------

TEST_F(Rfc9112, Http2PrefaceIs505AndCloses_2_3) {
  Expect("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, true);
}

TEST_F(Rfc9112, MajorVersionOtherThanOneIs505AndCloses_2_3) {
  Expect("GET /healthz HTTP/3.0\r\nHost: 127.0.0.1\r\n\r\n", 505, true);
  Expect("GET /healthz HTTP/0.9\r\nHost: 127.0.0.1\r\n\r\n", 505, true);
}

TEST_F(Rfc9112, MalformedVersionIs400AndCloses_2_3) {
  Expect("GET /healthz http/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);  // case-sensitive
  Expect("GET /healthz HTTP/1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);
  Expect("GET /healthz\r\nHost: 127.0.0.1\r\n\r\n", 400, true);  // HTTP/0.9 simple request
}

TEST_F(Rfc9112, HigherMinorVersionIsServedAsHttp11_2_3_Rfc9110_6_2) {
  Expect("GET /healthz HTTP/1.7\r\nHost: 127.0.0.1\r\n\r\n", 200, false);
}

TEST_F(Rfc9112, Http10IsServedWithAnHttp11ResponseAndClosed_2_3_9_3) {
  auto r = Expect("GET /healthz HTTP/1.0\r\n\r\n", 200, true);  // no Host needed in 1.0
  if (r) {
    EXPECT_EQ(r->Header("Connection").value_or(""), "close");
  }
}

TEST_F(Rfc9112, Http10KeepAliveIsHonoured_9_3) {
  auto r = Expect("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 200, false);
  if (r) {
    EXPECT_EQ(r->Header("Connection").value_or(""), "keep-alive");
  }
}

// ---- §3 request line, §3.2 Host and request-target forms ------------------------------

TEST_F(Rfc9112, OverlongRequestLineIs414AndCloses_3) {
  std::string target = "/healthz?" + std::string(kMarker) + std::string(20000, 'a');
  Expect("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414, true);
}

TEST_F(Rfc9112, MissingHostIs400AndCloses_3_2) {
  Expect("GET /healthz?ZQXMARK HTTP/1.1\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, TwoHostLinesAre400AndClose_3_2) {
  Expect("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, true);
  Expect("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);
  // "any request message": HTTP/1.0 too.
  Expect("GET /healthz HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, InvalidHostValueIs400AndCloses_3_2) {
  for (std::string host : {"a b/c@@", "ZQXMARK@example.com", "h/p", "h:8x", "[::1", "[zz::1]:80",
                           ":80", "h:80:81", "a%zz", "h\\x"}) {
    SCOPED_TRACE(host);
    Expect("GET /healthz HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 400, true);
  }
}

TEST_F(Rfc9112, ValidHostValuesAreServed_3_2) {
  for (std::string host : {"127.0.0.1", "127.0.0.1:8080", "[::1]:80", "localhost"}) {
    SCOPED_TRACE(host);
    Expect("GET /healthz HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 200, false);
  }
  // Valid syntax naming a host this server does not answer for (allowed_hosts, by default
  // the issuer's host and loopback): 421, not 400 (RFC 9110 §15.5.20; tests/integration/
  // http/hosts_test.cc).
  for (std::string host : {"[v1.fe]", "crm.example.com", "xn--bcher-kva.example", "a%41b", ""}) {
    SCOPED_TRACE(host);
    Expect("GET /healthz HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 421, true);
  }
}

TEST_F(Rfc9112, AbsoluteFormIsAcceptedAndRouted_3_2_2) {
  Expect("GET http://127.0.0.1/healthz HTTP/1.1\r\nHost: other.example\r\n\r\n", 200, false);
  Expect("GET HTTPS://127.0.0.1:9/healthz?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200, false);
}

TEST_F(Rfc9112, AbsoluteFormWithUserinfoOrNoHostIs400_3_2_2_Rfc9110_4_2) {
  Expect("GET http://ZQXMARK@127.0.0.1/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);
  Expect("GET http:///healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);
  Expect("GET ftp://127.0.0.1/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, AuthorityFormIsForConnectOnly_3_2_3) {
  Expect("GET 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);
  Expect("CONNECT /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, ConnectIsNotImplemented_3_2_3_Rfc9110_9_3_6) {
  Expect("CONNECT crm.example.com:443 HTTP/1.1\r\nHost: crm.example.com:443\r\n\r\n", 501, true);
}

TEST_F(Rfc9112, AsteriskFormIsForOptionsOnly_3_2_4) {
  auto r = Expect("OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200, false);
  if (r) {
    EXPECT_EQ(r->Header("Content-Length").value_or(""), "0");  // RFC 9110 §9.3.7
    EXPECT_NE(r->Header("Allow").value_or("").find("GET"), std::string::npos);
  }
  Expect("GET * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, OriginFormWithAFragmentIs400_3_2) {
  Expect("GET /healthz#ZQXMARK HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, true);
}

// ---- §5 field syntax ----------------------------------------------------------------------

TEST_F(Rfc9112, WhitespaceBetweenFieldNameAndColonIs400AndCloses_5_1) {
  Expect("GET /healthz HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n", 400, true);
  Expect("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-ZQXMARK\t: 1\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, ObsFoldIs400AndCloses_5_2) {
  Expect("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\r\n ZQXMARK\r\n\r\n", 400, true);
  Expect("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\r\n\tZQXMARK\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, NulOrControlInAFieldValueIs400_Rfc9110_5_5) {
  using namespace std::string_literals;
  Expect("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ZQXMARK\0b\r\n\r\n"s, 400, true);
  Expect("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ZQXMARK\x01\r\n\r\n"s, 400, true);
}

TEST_F(Rfc9112, OversizedHeaderSectionIs431AndCloses_5) {
  Expect("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: " + std::string(20000, 'a') + "\r\n\r\n",
         431, true);
}

// ---- §6 message body framing ----------------------------------------------------------

TEST_F(Rfc9112, TransferEncodingWithContentLengthClosesConnection_6_1) {
  // The issue's row: an unknown coding next to Content-Length, keep-alive.
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n"
      "Transfer-Encoding: xchunked\r\nContent-Length: 5\r\n\r\nhello",
      400, true);
  // chunked and Content-Length, in both orders (Beast rejects these itself).
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
      "Content-Length: 5\r\n\r\n0\r\n\r\n",
      400, true);
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      400, true);
}

TEST_F(Rfc9112, PipelinedRequestBehindTeAndClIsNeverAnswered_6_1) {
  // A classic smuggling shape: whichever framing a proxy used, crmd answers once and
  // closes; the hidden second request is never answered as a request of its own.
  const std::string hidden = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (std::string first :
       {"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
        "Content-Length: 4\r\n\r\n0\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: xchunked\r\n"
        "Content-Length: 0\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked, identity\r\n"
        "\r\n"}) {
    SCOPED_TRACE(first);
    RawConnection c(Port());
    c.Send(first + hidden);
    auto r = c.Read();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400);
    EXPECT_FALSE(c.Read(std::chrono::milliseconds(500)).has_value()) << "a second answer";
    EXPECT_TRUE(c.Closed());
  }
  EXPECT_EQ(StillServes(), 200);
}

TEST_F(Rfc9112, UnknownTransferCodingIs501AndCloses_6_1) {
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
      "0\r\n\r\n",
      501, true);
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: zqxmark\r\n"
      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      501, true);
}

TEST_F(Rfc9112, ChunkedNotFinalIs400AndCloses_6_3) {
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"
      "0\r\n\r\n",
      400, true);
  Expect("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: xchunked\r\n\r\n", 400,
         true);
  Expect("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", 400,
         true);
}

TEST_F(Rfc9112, ChunkedAppliedTwiceIs400AndCloses_6_1) {
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"
      "0\r\n\r\n",
      400, true);
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      400, true);
}

TEST_F(Rfc9112, TransferEncodingInHttp10Is400AndCloses_6_1) {
  Expect("POST /healthz HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, true);
}

TEST_F(Rfc9112, InvalidContentLengthIs400AndCloses_6_3) {
  for (std::string cl : {"abc", "-1", "+5", "5, 6", "0x5", "99999999999999999999999", ""}) {
    SCOPED_TRACE(cl);
    Expect("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + cl + "\r\n\r\nhello",
           400, true);
  }
}

TEST_F(Rfc9112, RepeatedDifferingContentLengthIs400AndCloses_6_3) {
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n"
      "\r\nhello!",
      400, true);
}

TEST_F(Rfc9112, RepeatedIdenticalContentLengthIsOneValue_6_3_Rfc9110_8_6) {
  // The handler answers (405: /healthz takes no POST); the body was framed correctly, so
  // the connection stays usable.
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n"
      "\r\nhello",
      405, false);
  Expect("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5, 5\r\n\r\nhello", 405,
         false);
}

TEST_F(Rfc9112, ChunkedBodyIsReadWholeAndTheConnectionReused_7_1) {
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;ext=1\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n",
      405, false);
}

TEST_F(Rfc9112, MalformedChunkIs400AndCloses_7_1) {
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "zz\r\nZQXMARK\r\n0\r\n\r\n",
      400, true);
}

// ---- RFC 9110 request handling -------------------------------------------------------

TEST_F(Rfc9112, Expect100ContinueGets100BeforeTheBody_Rfc9110_10_1_1) {
  RawConnection c(Port());
  c.Send(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-Continue\r\n"
      "Content-Length: 5\r\n\r\n");
  auto interim = c.Read();
  ASSERT_TRUE(interim.has_value());
  EXPECT_EQ(interim->status, 100);
  c.Send("hello");
  auto r = c.Read();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 405);
  EXPECT_FALSE(c.Closed());
}

TEST_F(Rfc9112, Expect100ContinueIsIgnoredInHttp10_Rfc9110_10_1_1) {
  RawConnection c(Port());
  c.Send("POST /healthz HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  EXPECT_FALSE(c.Read(std::chrono::milliseconds(300)).has_value()) << "a 1xx to HTTP/1.0";
  c.Send("hello");
  auto r = c.Read();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 405);
}

TEST_F(Rfc9112, Expect100ContinueWithoutContentGetsTheAnswerOnly_Rfc9110_10_1_1) {
  Expect("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n\r\n", 200, false);
}

TEST_F(Rfc9112, UnknownExpectationIs417AndCloses_Rfc9110_10_1_1) {
  Expect(
      "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: zqxmark\r\nContent-Length: 5\r\n"
      "\r\nhello",
      417, true);
}

TEST_F(Rfc9112, ResponsesCarryDate_Rfc9110_6_6_1) {
  auto ok = testing::RoundTrip(Port(), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(ok->Header("Date").has_value());
  EXPECT_EQ(ok->Header("Date").value_or("").size(), 29u);  // IMF-fixdate
  EXPECT_EQ(ok->Header("Date").value_or("").substr(26), "GMT");
  auto bad = testing::RoundTrip(Port(), "GET /healthz HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(bad.has_value());
  EXPECT_TRUE(bad->Header("Date").has_value());
}

TEST_F(Rfc9112, PipelinedValidRequestsAreAnsweredInOrder_9_3_2) {
  RawConnection c(Port());
  c.Send(
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
      "GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  for (int expected : {200, 404, 200}) {
    auto r = c.Read();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, expected);
  }
  EXPECT_TRUE(c.Closed());
}

}  // namespace
}  // namespace crmd

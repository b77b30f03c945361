// Streamed content both ways, on the http::Server alone: a request body the handler reads
// as it arrives (ServerOptions::stream_body, Request::body_stream) and an answer made a
// piece at a time (Response::stream), on the wire as RFC 9112 frames them.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "src/http/server.h"
#include "tests/support/raw_http.h"

namespace crmd::http {
namespace {

// POST /upload streams; the handler reads all of it and answers its size and a checksum
// (or "failed" when the body could not be read to its end). GET /pieces?n=K answers K
// pieces of "piece <i>\n"; /broken fails after two; anything else echoes the body size.
Response Handle(const Request& req, std::atomic<int>* failed_reads) {
  if (req.path == "/upload") {
    if (!req.body_stream) return Response::Text(500, "not streamed");
    uint64_t total = 0, sum = 0;
    char buf[7000];
    for (;;) {
      size_t n = req.body_stream->read(buf, sizeof buf);
      if (n == BodyStream::kFailed) {
        ++*failed_reads;
        return Response::Text(500, "failed");
      }
      if (n == 0) break;
      for (size_t i = 0; i < n; ++i) sum = sum * 31 + static_cast<unsigned char>(buf[i]);
      total += n;
    }
    return Response::Text(200, std::to_string(total) + " " + std::to_string(sum) + " of " +
                                   std::to_string(req.body_stream->length));
  }
  if (req.path == "/refuse") return Response::Text(413, "too large");  // reads nothing
  if (req.path == "/pieces" || req.path == "/broken") {
    int n = req.query.empty() ? 3 : std::stoi(req.query.substr(2));
    auto next = std::make_shared<int>(0);
    Response r = Response::Text(200, "", "text/plain");
    r.stream = [next, n, broken = req.path == "/broken"](std::string& out) {
      if (broken && *next == 2) return StreamStep::kFailed;
      out = "piece " + std::to_string((*next)++) + "\n";
      return *next < n ? StreamStep::kMore : StreamStep::kEnd;
    };
    return r;
  }
  return Response::Text(200, "whole " + std::to_string(req.body.size()));
}

uint64_t Checksum(const std::string& s) {
  uint64_t sum = 0;
  for (char c : s) sum = sum * 31 + static_cast<unsigned char>(c);
  return sum;
}

class Streaming : public ::testing::Test {
 protected:
  void SetUp() override {
    auto port = server_.Start();
    ASSERT_TRUE(port.has_value());
    port_ = *port;
  }
  void TearDown() override { server_.Stop(); }

  std::atomic<int> failed_reads_{0};
  Server server_{{.port = 0,
                  .max_body_bytes = 1024,
                  .stream_body =
                      [](std::string_view method, std::string_view path, std::string_view) {
                        return method == "POST" && (path == "/upload" || path == "/refuse");
                      },
                  .read_timeout_s = 2,
                  .access_log = false},
                 [this](const Request& req) { return Handle(req, &failed_reads_); }};
  uint16_t port_ = 0;
};

std::string Post(std::string_view path, const std::string& body, std::string_view extra = "") {
  return "POST " + std::string(path) +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         std::string(extra) + "\r\n" + body;
}

TEST_F(Streaming, AStreamedBodyFarOverMaxBodyBytesReachesTheHandlerWhole) {
  std::string body;
  for (int i = 0; body.size() < 3'000'000; ++i) body += "row " + std::to_string(i) + ",x\n";
  testing::RawConnection c(port_);
  c.Send(Post("/upload", body));
  auto r = c.Read(std::chrono::seconds(20));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->body, std::to_string(body.size()) + " " + std::to_string(Checksum(body)) + " of " +
                         std::to_string(body.size()));
  // Read to its end, the connection carries the next request.
  c.Send(Post("/other", "abc"));
  auto next = c.Read();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "whole 3");
}

TEST_F(Streaming, OtherPathsKeepMaxBodyBytes) {
  auto r = testing::RoundTrip(port_, Post("/other", std::string(2000, 'a')));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("payload_too_large"), std::string::npos) << r->body;
}

TEST_F(Streaming, ExpectContinueIsAnsweredBeforeTheHandlerReads) {
  testing::RawConnection c(port_);
  std::string body(5000, 'z');
  c.Send("POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n");
  auto cont = c.Read();
  ASSERT_TRUE(cont);
  EXPECT_EQ(cont->status, 100);
  c.Send(body);
  auto r = c.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.substr(0, 5), "5000 ");
}

TEST_F(Streaming, AClientThatStopsSendingIsAFailedReadNotAShortBody) {
  testing::RawConnection c(port_);
  std::string head = "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n";
  c.Send(head + std::string(40000, 'q'));
  // read_timeout_s is 2: the handler's read fails, and no answer says 200.
  auto r = c.Read(std::chrono::seconds(8));
  if (r) EXPECT_NE(r->status, 200) << r->body;
  for (int i = 0; i < 80 && failed_reads_ == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(failed_reads_.load(), 1);
}

TEST_F(Streaming, AHandlerThatLeavesTheBodyUnreadEndsTheConnection) {
  testing::RawConnection c(port_);
  c.Send(Post("/refuse", std::string(4000, 'r')));
  auto r = c.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(r->Header("Connection").value_or(""), "close");
}

TEST_F(Streaming, AStreamedAnswerIsChunked) {
  testing::RawConnection c(port_);
  c.Send("GET /pieces?n=5 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  auto r = c.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("Transfer-Encoding").value_or(""), "chunked");
  EXPECT_FALSE(r->Header("Content-Length"));
  EXPECT_EQ(r->body, "piece 0\npiece 1\npiece 2\npiece 3\npiece 4\n");
  EXPECT_EQ(r->chunks, 5u);
  // The connection stays open for the next request.
  c.Send("GET /pieces?n=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  auto again = c.Read();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, "piece 0\n");
}

TEST_F(Streaming, ToHttp10TheCloseEndsAStreamedAnswer) {
  testing::RawConnection c(port_);
  c.Send("GET /pieces?n=3 HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n");
  std::string all = c.ReadToClose();
  size_t end = all.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos) << all;
  std::string head = all.substr(0, end);
  EXPECT_NE(head.find("Connection: close"), std::string::npos) << head;
  EXPECT_EQ(head.find("Transfer-Encoding"), std::string::npos) << head;
  EXPECT_EQ(head.find("Content-Length"), std::string::npos) << head;
  EXPECT_EQ(all.substr(end + 4), "piece 0\npiece 1\npiece 2\n");
}

TEST_F(Streaming, AFailedProducerLeavesTheAnswerVisiblyUnfinished) {
  testing::RawConnection c(port_);
  c.Send("GET /broken?n=5 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string all = c.ReadToClose();
  EXPECT_NE(all.find("piece 1\n"), std::string::npos) << all;
  EXPECT_EQ(all.find("0\r\n\r\n"), std::string::npos) << all;  // no last chunk
  testing::RawConnection again(port_);
  again.Send("GET /broken?n=5 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_FALSE(again.Read());  // a chunked reader never sees a complete answer
}

TEST_F(Streaming, HeadOfAStreamedAnswerHasNoContent) {
  testing::RawConnection c(port_);
  c.Send("HEAD /pieces?n=3 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string all = c.ReadToClose(std::chrono::milliseconds(800));
  ASSERT_NE(all.find("\r\n\r\n"), std::string::npos);
  EXPECT_EQ(all.substr(all.find("\r\n\r\n") + 4), "");
  EXPECT_NE(all.find("200"), std::string::npos);
}

}  // namespace
}  // namespace crmd::http

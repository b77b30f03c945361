// The HTTP server on its own: graceful shutdown, connection cap, idle timeout.
#include "src/http/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string_view>
#include <thread>
#include <vector>

#include "src/http/client.h"

namespace crmd::http {
namespace {

Result<ClientResponse> Get(uint16_t port, const std::string& path, int timeout_ms = 5000) {
  auto client = MakeHttpClient();
  return client->Send({.method = "GET",
                       .url = "http://127.0.0.1:" + std::to_string(port) + path,
                       .timeout_ms = timeout_ms,
                       .allow_private = true});
}

// A raw TCP connection that sends nothing; returns the fd (or -1).
int ConnectRaw(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads until EOF or `timeout`; true when the peer closed the connection.
bool PeerCloses(int fd, std::chrono::seconds timeout) {
  timeval tv{static_cast<time_t>(timeout.count()), 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[256];
  while (true) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n == 0) return true;
    if (n < 0) return false;  // timed out: still open
  }
}

TEST(HttpServer, GracefulStopFinishesInFlightRequests) {
  std::atomic<bool> entered{false};
  Server server({.port = 0, .shutdown_grace_s = 10, .access_log = false}, [&](const Request& req) {
    if (req.path == "/slow") {
      entered = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
    }
    return Response::Text(200, "done");
  });
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  auto slow = std::async(std::launch::async, [&] { return Get(*port, "/slow"); });
  while (!entered) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server.Stop();  // returns only after the in-flight request is answered
  auto res = slow.get();
  ASSERT_TRUE(res.has_value()) << res.error().detail;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "done");
  // No new connections after stop.
  EXPECT_FALSE(Get(*port, "/fast", 1000).has_value());
}

// With several I/O threads, each runs an io_context of its own and connections go to them
// in turn: every connection is answered whichever thread it landed on, and stopping the
// server closes the idle keep-alive connections of every thread.
TEST(HttpServer, EveryIoThreadAnswersItsConnectionsAndStopClosesThemAll) {
  Server server({.port = 0, .io_threads = 3, .idle_timeout_s = 30, .access_log = false},
                [](const Request& req) { return Response::Text(200, "hello " + req.path); });
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  std::vector<int> fds;
  for (int i = 0; i < 7; ++i) {
    int fd = ConnectRaw(*port);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
  }
  // All seven are open at once (so they spread over the three threads), then each asks.
  for (size_t i = 0; i < fds.size(); ++i) {
    std::string req = "GET /c" + std::to_string(i) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ASSERT_EQ(send(fds[i], req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  }
  for (size_t i = 0; i < fds.size(); ++i) {
    timeval tv{5, 0};
    setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string got;
    const std::string want = "hello /c" + std::to_string(i);
    char buf[1024];
    while (got.find(want) == std::string::npos) {
      ssize_t n = recv(fds[i], buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    EXPECT_NE(got.find("HTTP/1.1 200"), std::string::npos) << "connection " << i << ": " << got;
    EXPECT_NE(got.find(want), std::string::npos) << "connection " << i << ": " << got;
  }
  server.Stop();
  for (int fd : fds) {
    EXPECT_TRUE(PeerCloses(fd, std::chrono::seconds(5)));
    close(fd);
  }
}

TEST(HttpServer, ConnectionsOverTheCapAreClosedAtOnce) {
  Server server({.port = 0, .idle_timeout_s = 30, .max_connections = 2, .access_log = false},
                [](const Request&) { return Response::Text(200, "ok"); });
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  int a = ConnectRaw(*port), b = ConnectRaw(*port);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let both be accepted
  int c = ConnectRaw(*port);
  ASSERT_GE(c, 0);
  EXPECT_TRUE(PeerCloses(c, std::chrono::seconds(3)));
  close(a);
  close(b);
  close(c);
  server.Stop();
}

TEST(HttpServer, IdleConnectionIsClosedAfterTheIdleTimeout) {
  Server server({.port = 0, .idle_timeout_s = 1, .access_log = false},
                [](const Request&) { return Response::Text(200, "ok"); });
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  int fd = ConnectRaw(*port);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(PeerCloses(fd, std::chrono::seconds(5)));
  close(fd);
  server.Stop();
}

// Sends `request` on `fd` and reads one answer, which must be a 200 with content "ok";
// false if the peer closes first or 5 s pass without a byte.
bool RoundTrip(int fd, std::string_view request) {
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size()))
    return false;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string got;
  char buf[4096];
  while (got.find("\r\n\r\nok") == std::string::npos) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    got.append(buf, static_cast<size_t>(n));
  }
  return got.rfind("HTTP/1.1 200 ", 0) == 0;
}

constexpr std::string_view kPlainGet = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

// The read deadline is shorter than the idle one the connection waited under: it must
// take effect at once, not when the idle one would have.
TEST(HttpServer, AStalledRequestIsClosedAfterTheReadTimeoutNotTheIdleOne) {
  Server server({.port = 0, .read_timeout_s = 1, .idle_timeout_s = 30, .access_log = false},
                [](const Request&) { return Response::Text(200, "ok"); });
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  int fd = ConnectRaw(*port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(RoundTrip(fd, kPlainGet));
  const std::string_view part = "GET / HTTP/1.1\r\nHo";
  ASSERT_EQ(send(fd, part.data(), part.size(), MSG_NOSIGNAL), static_cast<ssize_t>(part.size()));
  EXPECT_TRUE(PeerCloses(fd, std::chrono::seconds(10)));
  close(fd);
  server.Stop();
}

// A connection in use keeps being served across many read and idle timeouts (each
// request moves its deadline), and a handler that runs longer than the read timeout
// still has its answer written; then, left idle, the connection is closed.
TEST(HttpServer, DeadlinesMoveWithEachRequestAndASlowHandlerIsAnswered) {
  Server server({.port = 0, .read_timeout_s = 1, .idle_timeout_s = 1, .access_log = false},
                [](const Request& req) {
                  if (req.path == "/slow")
                    std::this_thread::sleep_for(std::chrono::milliseconds(1600));
                  return Response::Text(200, "ok");
                });
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  int fd = ConnectRaw(*port);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(RoundTrip(fd, kPlainGet)) << "request " << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // 3.2 s in all
  }
  EXPECT_TRUE(RoundTrip(fd, "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  EXPECT_TRUE(RoundTrip(fd, kPlainGet));
  EXPECT_TRUE(PeerCloses(fd, std::chrono::seconds(10)));
  close(fd);
  server.Stop();
}

TEST(HttpServer, HandlerExceptionBecomesA500WithoutDetail) {
  Server server({.port = 0, .access_log = false}, [](const Request&) -> Response {
    throw std::runtime_error("secret internal detail");
  });
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  auto res = Get(*port, "/");
  ASSERT_TRUE(res.has_value());
  EXPECT_EQ(res->status, 500);
  EXPECT_EQ(res->body.find("secret"), std::string::npos);
  server.Stop();
}

// Reads until the peer closes (or 10 s pass without a byte), then closes `fd`.
std::string ReadToEnd(int fd) {
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

// Sends `request` on a fresh connection and reads until the server closes it.
std::string Exchange(uint16_t port, const std::string& request) {
  int fd = ConnectRaw(port);
  if (fd < 0) return {};
  for (size_t sent = 0; sent < request.size();) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  return ReadToEnd(fd);
}

// The body of a /size/<n> answer: n bytes that differ from position to position.
std::string Pattern(size_t n) {
  std::string s(n, ' ');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 26) % 26);
  return s;
}

Handler SizedAnswers() {
  return [](const Request& req) {
    if (req.path.rfind("/size/", 0) == 0)
      return Response::Text(200, Pattern(std::stoul(req.path.substr(6))));
    if (req.path == "/no-content-with-body") {
      Response r = Response::Text(204, "this must not be sent");
      return r;
    }
    if (req.path == "/split") {
      Response r = Response::Empty(302);
      r.Set("Location", "/next\r\nSet-Cookie: session=stolen");
      return r;
    }
    return Response::Text(404, "no");
  };
}

TEST(HttpServer, AnswersOfEverySizeArriveWholeOnOneConnection_Rfc9112_6_3) {
  Server server({.port = 0, .access_log = false}, SizedAnswers());
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  // Around the size up to which the content is copied after the head (64 KiB) and well
  // past it, pipelined on one connection: each answer framed by its Content-Length.
  const std::vector<size_t> sizes = {0, 1, 700, 65535, 65536, 65537, 300000};
  std::string request;
  for (size_t i = 0; i < sizes.size(); ++i)
    request += "GET /size/" + std::to_string(sizes[i]) + " HTTP/1.1\r\nHost: a\r\n" +
               (i + 1 == sizes.size() ? "Connection: close\r\n" : "") + "\r\n";
  std::string wire = Exchange(*port, request);
  size_t at = 0;
  for (size_t n : sizes) {
    size_t end = wire.find("\r\n\r\n", at);
    ASSERT_NE(end, std::string::npos) << "answer for " << n << " missing";
    std::string head = wire.substr(at, end + 4 - at);
    EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
    EXPECT_NE(head.find("\r\nContent-Length: " + std::to_string(n) + "\r\n"), std::string::npos)
        << head;
    ASSERT_GE(wire.size(), end + 4 + n) << "content of " << n << " cut short";
    EXPECT_TRUE(wire.compare(end + 4, n, Pattern(n)) == 0) << "content of " << n << " differs";
    at = end + 4 + n;
  }
  EXPECT_EQ(at, wire.size()) << "bytes after the last answer";
  server.Stop();
}

TEST(HttpServer, HeadAnswersCarryTheLengthAndNoContent_Rfc9110_9_3_2) {
  Server server({.port = 0, .access_log = false}, SizedAnswers());
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  std::string wire = Exchange(*port,
                              "HEAD /size/300000 HTTP/1.1\r\nHost: a\r\n\r\n"
                              "HEAD /size/5 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  size_t first = wire.find("\r\n\r\n");
  ASSERT_NE(first, std::string::npos) << wire;
  EXPECT_NE(wire.substr(0, first).find("Content-Length: 300000"), std::string::npos) << wire;
  // The second answer's status line follows the first head at once: no content between.
  EXPECT_EQ(wire.compare(first + 4, 17, "HTTP/1.1 200 OK\r\n"), 0) << wire;
  EXPECT_NE(wire.find("Content-Length: 5\r\n"), std::string::npos) << wire;
  EXPECT_EQ(wire.size(), wire.rfind("\r\n\r\n") + 4) << wire;
  server.Stop();
}

TEST(HttpServer, A204SendsNoContentEvenWhenTheHandlerGaveSome_Rfc9110_15_3_5) {
  Server server({.port = 0, .access_log = false}, SizedAnswers());
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  std::string wire = Exchange(*port,
                              "GET /no-content-with-body HTTP/1.1\r\nHost: a\r\n\r\n"
                              "GET /size/3 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(wire.rfind("HTTP/1.1 204 No Content\r\n", 0), 0u) << wire;
  EXPECT_EQ(wire.find("must not"), std::string::npos) << wire;
  size_t first = wire.find("\r\n\r\n");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(wire.find("Content-Length", 0), wire.find("Content-Length: 3")) << wire;
  EXPECT_EQ(wire.compare(first + 4, 17, "HTTP/1.1 200 OK\r\n"), 0) << wire;
  EXPECT_EQ(wire.substr(wire.size() - 3), Pattern(3));
  server.Stop();
}

TEST(HttpServer, AHandlerFieldThatWouldSplitTheAnswerBecomesA500_Rfc9110_5_5) {
  Server server({.port = 0, .access_log = false}, SizedAnswers());
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  std::string wire = Exchange(*port, "GET /split HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(wire.rfind("HTTP/1.1 500 Internal Server Error\r\n", 0), 0u) << wire;
  EXPECT_EQ(wire.find("Set-Cookie"), std::string::npos) << wire;
  EXPECT_EQ(wire.find("/next"), std::string::npos) << wire;
  EXPECT_NE(wire.find("internal error"), std::string::npos) << wire;
  server.Stop();
}

TEST(HttpServer, ContentIsReadByItsLengthWhetherItComesLateOrWithTheNextRequest_Rfc9112_6_3) {
  Server server({.port = 0, .access_log = false}, [](const Request& req) {
    return Response::Text(200, req.method + " " + std::to_string(req.body.size()) + " " +
                                   req.body.substr(0, 8) + "|" +
                                   req.body.substr(req.body.size() > 8 ? req.body.size() - 8 : 0));
  });
  auto port = server.Start();
  ASSERT_TRUE(port.has_value());
  // Two requests with content in one send: each gets exactly its own bytes.
  std::string wire = Exchange(*port,
                              "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789"
                              "POST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
                              "Connection: close\r\n\r\nxyz");
  EXPECT_NE(wire.find("POST 10 01234567|23456789"), std::string::npos) << wire;
  EXPECT_NE(wire.find("POST 3 xyz|xyz"), std::string::npos) << wire;

  // 200,000 bytes of content sent in pieces, the head first and alone.
  int fd = ConnectRaw(*port);
  ASSERT_GE(fd, 0);
  std::string content = Pattern(200000);
  std::string head =
      "PUT /big HTTP/1.1\r\nHost: a\r\nContent-Length: 200000\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  for (size_t at = 0; at < content.size(); at += 50000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(send(fd, content.data() + at, 50000, MSG_NOSIGNAL), 50000);
  }
  std::string answer = ReadToEnd(fd);
  EXPECT_NE(answer.find("PUT 200000 " + content.substr(0, 8) + "|" + content.substr(200000 - 8)),
            std::string::npos)
      << answer;
  server.Stop();
}

}  // namespace
}  // namespace crmd::http

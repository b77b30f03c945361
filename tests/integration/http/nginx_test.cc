// The RFC 9112 rows again, through nginx (Debian's, started by the test) in front of crmd:
// whatever nginx does with a request, it and crmd agree on where the request ends. A row
// crmd refuses is refused through nginx too (by nginx or by crmd), a row crmd serves is
// served, and a request hidden behind bad framing is never answered. crmd trusts nginx
// (trusted_proxies=127.0.0.1), so the client it sees is the one nginx forwarded in
// X-Forwarded-For, and allowed_hosts applies to the Host nginx passes on. Skipped when
// /usr/sbin/nginx is not installed.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "src/app/services.h"
#include "tests/integration/http/whoami.h"
#include "tests/support/raw_http.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

using testing::AddWhoAmI;
using testing::RawConnection;

constexpr const char* kNginx = "/usr/sbin/nginx";

uint16_t FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// One request from the loopback address `from` (e.g. 127.0.0.2, so that nginx sees a
// client other than itself); the whole answer, read until the server closes.
std::string RequestFrom(const char* from, uint16_t port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, from, &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(port);
  dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) == 0 &&
      connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    timeval tv{.tv_sec = 5, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[4096];
    for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, n);
  }
  close(fd);
  return out;
}

class ThroughNginx : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (access(kNginx, X_OK) != 0) return;
    crmd_ = new testing::TestServer({.configure =
                                         [](Config& c) {
                                           c.trusted_proxies = {"127.0.0.1"};
                                           c.allowed_hosts = {"crm.example.com", "127.0.0.1"};
                                         },
                                     .before_start = AddWhoAmI});
    dir_ = new testing::TempDir();
    port_ = FreePort();
    const std::string d = dir_->path();
    // The usual reverse-proxy setup. server_name matters: for an HTTP/1.0 request without
    // Host, $host is the server_name, and an empty one would make nginx forward an HTTP/1.1
    // request without Host, which crmd refuses (docs/http.md).
    std::ofstream(d + "/nginx.conf")
        << "daemon off; master_process off; worker_processes 1;\n"
        << "pid " << d << "/nginx.pid; error_log " << d << "/error.log;\n"
        << "events { worker_connections 64; }\n"
        << "http {\n  access_log off;\n"
        << "  client_body_temp_path " << d << "/body; proxy_temp_path " << d << "/proxy;\n"
        << "  fastcgi_temp_path " << d << "/fcgi; uwsgi_temp_path " << d << "/uwsgi;\n"
        << "  scgi_temp_path " << d << "/scgi;\n"
        << "  upstream crmd { server 127.0.0.1:" << testing::PortOf(crmd_->base_url())
        << "; keepalive 4; }\n"
        << "  server {\n    listen 127.0.0.1:" << port_ << "; server_name crm.example.com;\n"
        << "    location / { proxy_pass http://crmd; proxy_http_version 1.1;\n"
        << "      proxy_set_header Connection \"\"; proxy_set_header Host $host;\n"
        << "      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n"
        << "      proxy_set_header X-Forwarded-Proto $scheme; }\n"
        << "  }\n}\n";
    pid_ = fork();
    if (pid_ == 0) {
      execl(kNginx, "nginx", "-e", (d + "/error.log").c_str(), "-p", d.c_str(), "-c",
            (d + "/nginx.conf").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 100; ++i) {
      if (RawConnection(port_).connected()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  static void TearDownTestSuite() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    delete dir_;
    delete crmd_;
    crmd_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!crmd_) GTEST_SKIP() << kNginx << " is not installed";
    ASSERT_TRUE(RawConnection(port_).connected()) << "nginx did not start";
  }

  // The status of `request` straight to crmd and through nginx, each on a new connection.
  static std::pair<int, int> Both(const std::string& request) {
    auto direct = testing::RoundTrip(testing::PortOf(crmd_->base_url()), request);
    auto proxied = testing::RoundTrip(port_, request);
    return {direct ? direct->status : 0, proxied ? proxied->status : 0};
  }

  static testing::TestServer* crmd_;
  static testing::TempDir* dir_;
  static uint16_t port_;
  static pid_t pid_;
};

testing::TestServer* ThroughNginx::crmd_ = nullptr;
testing::TempDir* ThroughNginx::dir_ = nullptr;
uint16_t ThroughNginx::port_ = 0;
pid_t ThroughNginx::pid_ = -1;

TEST_F(ThroughNginx, RefusedAndServedRowsAgree_Rfc9112) {
  const std::string h = "Host: 127.0.0.1\r\n";
  struct Row {
    std::string name, request;
  };
  std::vector<Row> rows = {
      {"served", "GET /healthz HTTP/1.1\r\n" + h + "\r\n"},
      {"served 1.0", "GET /healthz HTTP/1.0\r\n\r\n"},
      {"absolute-form §3.2.2", "GET http://127.0.0.1/healthz HTTP/1.1\r\n" + h + "\r\n"},
      {"chunked §7.1 (405 both ways)",
       "POST /healthz HTTP/1.1\r\n" + h +
           "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"},
      {"missing Host §3.2", "GET /healthz HTTP/1.1\r\n\r\n"},
      {"two Host §3.2", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"},
      {"invalid Host §3.2", "GET /healthz HTTP/1.1\r\nHost: a b/c@@\r\n\r\n"},
      {"TE+CL §6.1", "POST /healthz HTTP/1.1\r\n" + h +
                         "Transfer-Encoding: xchunked\r\nContent-Length: 5\r\n\r\nhello"},
      {"chunked+CL §6.1", "POST /healthz HTTP/1.1\r\n" + h +
                              "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"},
      {"chunked not final §6.3",
       "POST /healthz HTTP/1.1\r\n" + h + "Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"},
      {"differing CL §6.3",
       "POST /healthz HTTP/1.1\r\n" + h + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"},
      {"invalid CL §6.3", "POST /healthz HTTP/1.1\r\n" + h + "Content-Length: 5x\r\n\r\nhello"},
      {"space before colon §5.1", "GET /healthz HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n"},
      {"obs-fold §5.2", "GET /healthz HTTP/1.1\r\n" + h + "X-A: a\r\n b\r\n\r\n"},
      {"bare CR §2.2", "GET /healthz HTTP/1.1\r\n" + h + "X-A: a\rb\r\n\r\n"},
      {"HTTP/2 preface §2.3", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"},
      {"allowed Host", "GET /healthz HTTP/1.1\r\nHost: crm.example.com\r\n\r\n"},
      {"misdirected Host RFC 9110 §15.5.20",
       "GET /healthz HTTP/1.1\r\nHost: zqx.evil.example\r\n\r\n"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    auto [direct, proxied] = Both(row.request);
    ASSERT_NE(direct, 0);
    // nginx may answer with another 4xx/5xx than crmd, but never serves what crmd refuses
    // nor refuses what crmd serves.
    EXPECT_EQ(direct >= 400, proxied >= 400) << "direct " << direct << ", nginx " << proxied;
  }
}

TEST_F(ThroughNginx, RequestHiddenBehindBadFramingIsNeverAnswered_Rfc9112_6_1) {
  const std::string hidden = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (std::string first :
       {"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
        "Content-Length: 4\r\n\r\n0\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: xchunked\r\n"
        "Content-Length: 0\r\n\r\n"}) {
    SCOPED_TRACE(first);
    RawConnection c(port_);
    c.Send(first + hidden);
    auto r = c.Read();
    ASSERT_TRUE(r.has_value());
    EXPECT_GE(r->status, 400);
    EXPECT_FALSE(c.Read(std::chrono::milliseconds(500)).has_value()) << "a second answer";
  }
  auto ok = testing::RoundTrip(port_, hidden);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status, 200);
}

TEST_F(ThroughNginx, CrmdSeesTheClientNginxForwards_Rfc7239_XForwardedFor) {
  // The client connects to nginx from 127.0.0.2 and forges an X-Forwarded-For of its own;
  // nginx appends the address it saw, crmd trusts nginx (127.0.0.1) and nobody else, so
  // the client is 127.0.0.2 and the forged part is never believed.
  auto raw = RequestFrom("127.0.0.2", port_,
                         "GET /test/whoami HTTP/1.1\r\nHost: crm.example.com\r\n"
                         "X-Forwarded-For: 203.0.113.9\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(raw.rfind("HTTP/1.1 200", 0), 0u) << raw;
  auto j = nlohmann::json::parse(raw.substr(raw.find("\r\n\r\n") + 4), nullptr, false);
  ASSERT_TRUE(j.is_object()) << raw;
  EXPECT_EQ(j["remote_ip"], "127.0.0.2");
  EXPECT_EQ(j["peer_ip"], "127.0.0.1");
  EXPECT_EQ(j["scheme"], "http");
  EXPECT_EQ(j["host"], "crm.example.com");

  // Straight to crmd from 127.0.0.2 (not a trusted proxy), the same field is ignored.
  auto direct = RequestFrom("127.0.0.2", testing::PortOf(crmd_->base_url()),
                            "GET /test/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            "X-Forwarded-For: 203.0.113.9\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(direct.rfind("HTTP/1.1 200", 0), 0u) << direct;
  auto d = nlohmann::json::parse(direct.substr(direct.find("\r\n\r\n") + 4), nullptr, false);
  ASSERT_TRUE(d.is_object()) << direct;
  EXPECT_EQ(d["remote_ip"], "127.0.0.2");
  EXPECT_EQ(d["peer_ip"], "127.0.0.2");
}

TEST_F(ThroughNginx, MisdirectedHostIs421ThroughNginxToo_Rfc9110_15_5_20) {
  auto r = testing::RoundTrip(port_, "GET /healthz HTTP/1.1\r\nHost: zqx.evil.example\r\n\r\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 421);
  EXPECT_EQ(r->body.find("zqx"), std::string::npos) << r->body;
}

}  // namespace
}  // namespace crmd

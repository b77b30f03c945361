// allowed_hosts (421 Misdirected Request, RFC 9110 §15.5.20) and trusted_proxies
// (X-Forwarded-*, Forwarded RFC 7239) over raw sockets against a real crmd on port 0.
// The per-IP form limit seeing the forwarded client is in tests/integration/rest/forms_test.cc,
// nginx in front of crmd in nginx_test.cc.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "src/app/services.h"
#include "tests/integration/http/whoami.h"
#include "tests/support/raw_http.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

using testing::AddWhoAmI;
using testing::RawConnection;
using testing::RawResponse;
using testing::TestServer;
using testing::TestServerOptions;

TestServerOptions WithConfig(std::function<void(Config&)> configure) {
  return {.configure = std::move(configure), .before_start = AddWhoAmI};
}

class Hosts : public ::testing::Test {
 protected:
  explicit Hosts(TestServerOptions options = WithConfig(nullptr)) : server_(std::move(options)) {}
  uint16_t Port() { return testing::PortOf(server_.base_url()); }

  // One request on a fresh connection; its status, and for a listener refusal that the
  // answer has the shape of every other one (docs/http.md) and the connection is closed.
  std::optional<RawResponse> Send(const std::string& request) {
    RawConnection c(Port());
    c.Send(request);
    auto r = c.Read();
    EXPECT_TRUE(r.has_value()) << "no answer";
    if (r && r->status == 421) {
      EXPECT_EQ(r->Header("Content-Type").value_or(""), "application/problem+json");
      EXPECT_EQ(r->Header("Connection").value_or(""), "close");
      const std::string request_id(r->Header("X-Request-Id").value_or(""));
      EXPECT_FALSE(request_id.empty()) << r->head;
      auto j = nlohmann::json::parse(r->body, nullptr, false);
      EXPECT_TRUE(j.is_object()) << r->body;
      if (j.is_object()) {
        EXPECT_EQ(j.value("status", 0), 421);
        EXPECT_EQ(j.value("code", ""), "misdirected_request");
        EXPECT_EQ(j.value("title", ""), "Misdirected Request");
        EXPECT_EQ(j.value("request_id", ""), request_id);
        EXPECT_EQ(j.value("instance", ""), "urn:crmd:request:" + request_id);
      }
      EXPECT_EQ(r->body.find("zqx"), std::string::npos) << "echoes the host: " << r->body;
      EXPECT_TRUE(c.Closed());
    }
    return r;
  }
  int Status(const std::string& request) {
    auto r = Send(request);
    return r ? r->status : 0;
  }
  int Get(const std::string& path, const std::string& host, const std::string& extra = "") {
    return Status("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra + "\r\n");
  }
  nlohmann::json WhoAmI(const std::string& fields, const std::string& host = "127.0.0.1") {
    auto r = Send("GET /test/whoami HTTP/1.1\r\nHost: " + host + "\r\n" + fields + "\r\n");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->head + r->body : "no answer");
    if (!r || r->status != 200) return nlohmann::json::object();
    return nlohmann::json::parse(r->body, nullptr, false);
  }

  TestServer server_;
};

// ---- allowed_hosts, default: the issuer's host and loopback ------------------------------

TEST_F(Hosts, RFC9110_15_5_20_UnknownHostIs421OnEveryRoute) {
  const std::string evil = "zqx.evil.example";
  EXPECT_EQ(Get("/healthz", evil), 421);
  EXPECT_EQ(Get("/readyz", evil + ":8080"), 421);
  EXPECT_EQ(Get("/.well-known/oauth-authorization-server", evil), 421);
  EXPECT_EQ(Get("/api/crm/v1/form/get/1", evil), 421);
  EXPECT_EQ(Get("/nope", evil), 421);
  EXPECT_EQ(Status("POST /mcp HTTP/1.1\r\nHost: " + evil +
                   "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"),
            421);
  EXPECT_EQ(Status("OPTIONS * HTTP/1.1\r\nHost: " + evil + "\r\n\r\n"), 421);
  // The listener is still there for the right host.
  EXPECT_EQ(Get("/healthz", "127.0.0.1"), 200);
}

TEST_F(Hosts, RFC9110_15_5_20_BodyIsNotReadAndTheConnectionCloses) {
  RawConnection c(Port());
  c.Send(
      "POST /api/crm/v1/form/submit/1 HTTP/1.1\r\nHost: zqx.example\r\nContent-Length: 5\r\n"
      "\r\nhelloGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  auto r = c.Read();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 421);
  EXPECT_FALSE(c.Read(std::chrono::milliseconds(300)).has_value()) << "a second answer";
  EXPECT_TRUE(c.Closed());
}

TEST_F(Hosts, RFC9110_15_5_20_DefaultAllowsLoopbackNamesOnAnyPort) {
  for (std::string host : {"127.0.0.1", "127.0.0.1:1", "localhost", "LocalHost:8080", "[::1]",
                           "[::1]:443", "localhost.", "localhost.:3000"}) {
    SCOPED_TRACE(host);
    EXPECT_EQ(Get("/healthz", host), 200);
  }
  for (std::string host : {"127.0.0.2", "localhost.zqx.example", "", "[::2]", "zqx"}) {
    SCOPED_TRACE(host);
    EXPECT_EQ(Get("/healthz", host), 421);
  }
}

TEST_F(Hosts, RFC9112_3_2_2_AbsoluteFormAuthorityIsTheHostChecked) {
  EXPECT_EQ(Status("GET http://zqx.example/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), 421);
  EXPECT_EQ(Status("GET http://127.0.0.1/healthz HTTP/1.1\r\nHost: zqx.example\r\n\r\n"), 200);
}

TEST_F(Hosts, RFC9112_3_2_Http10WithoutHostIsServed) {
  EXPECT_EQ(Status("GET /healthz HTTP/1.0\r\n\r\n"), 200);
  EXPECT_EQ(Status("GET /healthz HTTP/1.0\r\nHost: zqx.example\r\n\r\n"), 421);
}

TEST_F(Hosts, UntrustedPeerForwardingFieldsAreIgnored_Rfc7239_8_1) {
  // No trusted_proxies: the loopback peer's fields change nothing.
  auto j = WhoAmI(
      "X-Forwarded-For: 198.51.100.7\r\nX-Forwarded-Proto: https\r\n"
      "X-Forwarded-Host: zqx.evil.example\r\n");
  EXPECT_EQ(j["remote_ip"], "127.0.0.1");
  EXPECT_EQ(j["peer_ip"], "127.0.0.1");
  EXPECT_EQ(j["scheme"], "http");
  EXPECT_EQ(j["host"], "127.0.0.1");
  auto f = WhoAmI("Forwarded: for=198.51.100.7;proto=https;host=zqx.evil.example\r\n");
  EXPECT_EQ(f["remote_ip"], "127.0.0.1");
  EXPECT_EQ(f["scheme"], "http");
}

// ---- allowed_hosts, the operator's list ----------------------------------------------------

class CustomHosts : public Hosts {
 protected:
  CustomHosts()
      : Hosts(WithConfig([](Config& c) {
          c.allowed_hosts = {"crm.example.com", "api.example.com:8443", "*.tenant.example",
                             "127.0.0.1"};
        })) {}
};

TEST_F(CustomHosts, RFC9110_15_5_20_ListedHostsAreServedOthers421) {
  EXPECT_EQ(Get("/healthz", "crm.example.com"), 200);
  EXPECT_EQ(Get("/healthz", "CRM.Example.com.:9000"), 200);
  EXPECT_EQ(Get("/healthz", "api.example.com:8443"), 200);
  EXPECT_EQ(Get("/healthz", "api.example.com:8444"), 421);
  EXPECT_EQ(Get("/healthz", "a.tenant.example"), 200);
  EXPECT_EQ(Get("/healthz", "tenant.example"), 421);
  // A list replaces the default: loopback names are allowed only if listed.
  EXPECT_EQ(Get("/healthz", "localhost"), 421);
  EXPECT_EQ(Get("/healthz", "127.0.0.1"), 200);
}

TEST_F(CustomHosts, McpDnsRebindingGuardStillAppliesBehindTheList) {
  // crm.example.com passes the listener, but /mcp answers only for the issuer's host and
  // loopback (docs/mcp.md): its own 403 (JSON-RPC body), not the listener's 421.
  auto r = Send(
      "POST /mcp HTTP/1.1\r\nHost: crm.example.com\r\nContent-Type: application/json\r\n"
      "Accept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n{}");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_NE(r->body.find("Host not allowed"), std::string::npos) << r->body;
}

// ---- trusted_proxies ----------------------------------------------------------------------

class BehindProxy : public Hosts {
 protected:
  BehindProxy() : Hosts(WithConfig([](Config& c) { c.trusted_proxies = {"127.0.0.0/8"}; })) {}
};

TEST_F(BehindProxy, XForwardedForFromATrustedPeerIsTheClient) {
  auto j = WhoAmI("X-Forwarded-For: 203.0.113.9, 198.51.100.7\r\n");
  EXPECT_EQ(j["remote_ip"], "198.51.100.7");
  EXPECT_EQ(j["peer_ip"], "127.0.0.1");
  EXPECT_EQ(j["scheme"], "http");
  // Trusted hops are skipped from the right.
  EXPECT_EQ(WhoAmI("X-Forwarded-For: 198.51.100.7, 127.0.0.5\r\n")["remote_ip"], "198.51.100.7");
}

TEST_F(BehindProxy, XForwardedProtoAndHostAreBelieved) {
  auto j = WhoAmI(
      "X-Forwarded-For: 198.51.100.7\r\nX-Forwarded-Proto: https\r\n"
      "X-Forwarded-Host: localhost:8443\r\n",
      "127.0.0.1:9999");
  EXPECT_EQ(j["scheme"], "https");
  EXPECT_EQ(j["host"], "localhost:8443");  // the handler reads the forwarded host as Host
}

TEST_F(BehindProxy, RFC9110_15_5_20_ForwardedHostIsTheOneChecked) {
  // The proxy says the client asked for a host crmd does not serve.
  EXPECT_EQ(Get("/healthz", "127.0.0.1", "X-Forwarded-Host: zqx.evil.example\r\n"), 421);
  EXPECT_EQ(Get("/healthz", "127.0.0.1", "Forwarded: for=198.51.100.7;host=zqx.evil.example\r\n"),
            421);
  // ...or one it does, while its own Host would not pass.
  EXPECT_EQ(Get("/healthz", "zqx.upstream", "X-Forwarded-Host: localhost\r\n"), 200);
}

TEST_F(BehindProxy, ForwardedRfc7239FromATrustedPeer_Rfc7239_4) {
  auto j = WhoAmI(
      "Forwarded: for=203.0.113.9, for=\"[2001:db8:cafe::17]:4711\";proto=https;"
      "host=\"localhost:8443\"\r\nForwarded: for=127.0.0.9\r\n");
  EXPECT_EQ(j["remote_ip"], "2001:db8:cafe::17");
  EXPECT_EQ(j["scheme"], "https");
  EXPECT_EQ(j["host"], "localhost:8443");
}

TEST_F(BehindProxy, MalformedOrObfuscatedForwardedIsIgnored_Rfc7239_6_3) {
  EXPECT_EQ(WhoAmI("Forwarded: for=\"198.51.100.7\r\n")["remote_ip"], "127.0.0.1");
  EXPECT_EQ(WhoAmI("Forwarded: for=198.51.100.7, for=_hidden\r\n")["remote_ip"], "127.0.0.1");
}

class NotBehindThisProxy : public Hosts {
 protected:
  NotBehindThisProxy()
      : Hosts(WithConfig([](Config& c) {
          c.trusted_proxies = {"10.0.0.0/8", "fd00::/8"};
        })) {}
};

TEST_F(NotBehindThisProxy, FieldsFromAPeerNotInTheListAreIgnored_Rfc7239_8_1) {
  auto j = WhoAmI("X-Forwarded-For: 198.51.100.7\r\nX-Forwarded-Proto: https\r\n");
  EXPECT_EQ(j["remote_ip"], "127.0.0.1");
  EXPECT_EQ(j["scheme"], "http");
  // Its X-Forwarded-Host is not the host checked either.
  EXPECT_EQ(Get("/healthz", "127.0.0.1", "X-Forwarded-Host: zqx.evil.example\r\n"), 200);
}

TEST(HostsConfig, BadEntriesFailAtStartup) {
  for (auto configure : std::vector<std::function<void(Config&)>>{
           [](Config& c) { c.allowed_hosts = {"http://crm.example.com"}; },
           [](Config& c) { c.trusted_proxies = {"10.0.0.0/33"}; }}) {
    EXPECT_THROW(TestServer({.configure = configure}), std::runtime_error);
  }
}

}  // namespace
}  // namespace crmd

// Issue 13: HTTPS for real. The crmd binary serves with tls_cert_file/tls_key_file made by
// OpenSSL for the test (tests/support/make-test-certs.sh), and a TLS client that trusts
// only the test CA checks the face: OAuth metadata and the issuer say https, the bearer
// challenge and authorization redirects name https URLs, REST answers, HSTS is sent. SIGHUP
// reloads the certificate without dropping an established connection: the old connection
// goes on with the old certificate, a new one sees the new certificate.
// The official MCP SDK's OAuth flow and tool calls over HTTPS: tests/e2e (E2E_TLS=1).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "src/http/client.h"
#include "src/http/server.h"
#include "src/store/db.h"
#include "tests/support/crmd_process.h"
#include "tests/support/test_server.h"
#include "tests/support/tls_client.h"

namespace crmd {
namespace {

using testing::TlsConnection;

std::string Shell(const std::string& cmd, int* exit_code = nullptr) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  if (exit_code) *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// Makes <dir>/<name>.pem and .key signed by <dir>/ca.pem; answers the fingerprint.
std::string MakeCert(const std::string& dir, const std::string& name) {
  int code = -1;
  std::string out =
      Shell(std::string(CRMD_SOURCE_DIR) + "/tests/support/make-test-certs.sh " + dir + " " + name,
            &code);
  EXPECT_EQ(code, 0) << out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// Waits (bounded) until crmd's log holds `what` at least `times` times.
bool WaitForLog(const std::string& log, const std::string& what, size_t times = 1,
                int seconds = 30) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (Count(ReadFile(log), what) >= times) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Count(ReadFile(log), what) >= times;
}

class Https : public ::testing::Test {
 protected:
  void SetUp() override {
    certs_ = dir_.path() + "/certs";
    first_fingerprint_ = MakeCert(certs_, "first");
    ASSERT_EQ(first_fingerprint_.size(), 64u);
    // What crmd is configured with; a renewal replaces these files.
    std::filesystem::copy_file(certs_ + "/first.pem", certs_ + "/server.pem");
    std::filesystem::copy_file(certs_ + "/first.key", certs_ + "/server.key");
    port_ = testing::FreePort();
    ASSERT_NE(port_, 0);
    base_ = "https://127.0.0.1:" + std::to_string(port_);
    log_ = dir_.path() + "/crmd.log";
    const std::string db = "sqlite:" + dir_.path() + "/crmd.db";
    int code = -1;
    std::string key = Shell(std::string(CRMD_BINARY_DIR) + "/src/app/crmctl --database_url=" + db +
                                " apikey create tls-test",
                            &code);
    ASSERT_EQ(code, 0) << key;
    // The JSON on stdout, without the "store the key now" line on stderr.
    const size_t open = key.find('{'), close = key.rfind('}');
    ASSERT_TRUE(open != std::string::npos && close != std::string::npos) << key;
    auto created = nlohmann::json::parse(key.substr(open, close - open + 1), nullptr, false);
    ASSERT_TRUE(created.is_object()) << key;
    api_key_ = created.value("key", "");
    ASSERT_FALSE(api_key_.empty()) << key;
    crmd_ = std::make_unique<testing::CrmdProcess>(
        std::vector<std::string>{"--port=" + std::to_string(port_), "--database_url=" + db,
                                 "--tls_cert_file=" + certs_ + "/server.pem",
                                 "--tls_key_file=" + certs_ + "/server.key",
                                 "--mail_dir=" + dir_.path() + "/mail"},
        log_);
    ASSERT_GT(crmd_->pid(), 0);
    ASSERT_TRUE(WaitForLog(log_, "\"event\":\"listening\"")) << ReadFile(log_);
  }

  std::string ca() const { return certs_ + "/ca.pem"; }

  testing::TempDir dir_;
  std::string certs_, log_, base_, api_key_, first_fingerprint_;
  uint16_t port_ = 0;
  std::unique_ptr<testing::CrmdProcess> crmd_;
};

TEST_F(Https, TheFaceSaysHttpsAndSendsHsts_Rfc6797_7_1) {
  TlsConnection c(port_, ca());
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c.Fingerprint(), first_fingerprint_);

  auto meta = c.Request("GET", "/.well-known/oauth-authorization-server");
  ASSERT_TRUE(meta.has_value());
  ASSERT_EQ(meta->status, 200) << meta->body;
  auto m = nlohmann::json::parse(meta->body);
  EXPECT_EQ(m["issuer"], base_);
  for (const char* k :
       {"authorization_endpoint", "token_endpoint", "registration_endpoint", "jwks_uri"})
    EXPECT_EQ(m.value(k, "").rfind(base_ + "/", 0), 0u) << k << ": " << m.value(k, "");
  ASSERT_TRUE(meta->Header("strict-transport-security")) << "HSTS on every HTTPS answer";
  EXPECT_NE(meta->Header("strict-transport-security")->find("max-age="), std::string::npos);

  auto resource = c.Request("GET", "/.well-known/oauth-protected-resource/mcp");
  ASSERT_TRUE(resource.has_value());
  ASSERT_EQ(resource->status, 200) << resource->body;
  auto r = nlohmann::json::parse(resource->body);
  EXPECT_EQ(r["resource"], base_ + "/mcp");
  EXPECT_EQ(r["authorization_servers"], nlohmann::json::array({base_}));

  // The MCP endpoint's challenge points at the https metadata (RFC 9728 §5.1).
  auto challenge =
      c.Request("POST", "/mcp",
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
                R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  ASSERT_TRUE(challenge.has_value());
  EXPECT_EQ(challenge->status, 401);
  EXPECT_NE(
      challenge->Header("www-authenticate")
          .value_or("")
          .find("resource_metadata=\"" + base_ + "/.well-known/oauth-protected-resource/mcp\""),
      std::string::npos)
      << challenge->Header("www-authenticate").value_or("");

  // REST with an API key, on the same keep-alive connection.
  auto rest = c.Request("GET", "/api/crm/v1/contact/nobody%40example.com",
                        "Authorization: Bearer " + api_key_ + "\r\n");
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(rest->status, 404) << rest->body;
  EXPECT_EQ(rest->Header("content-type").value_or(""), "application/problem+json");
  auto openapi = c.Request("GET", "/api/crm/v1/openapi.json");
  ASSERT_TRUE(openapi.has_value());
  EXPECT_EQ(openapi->status, 200);

  // An authorization request with prompt=none and nobody signed in redirects back with
  // the https issuer (RFC 9207). Only an operator-made client has its errors redirected
  // (RFC 9700 §4.11.2: anyone may register the others), so the operator makes one here.
  {
    auto db = store::Open("sqlite:" + dir_.path() + "/crmd.db", 1);
    ASSERT_TRUE(db) << db.error().message;
    auto made = (*db)->Write([](store::Conn& conn) {
      return conn.Exec(
          "INSERT INTO oauth_clients (client_id, token_endpoint_auth_method, client_name, "
          "redirect_uris, grant_types, metadata, source, revoked, created_at, updated_at) VALUES "
          "('tls-operator-app', 'none', 'tls test', '[\"http://127.0.0.1:9/cb\"]', "
          "'[\"authorization_code\"]', '{}', 'admin', 0, 0, 0)");
    });
    ASSERT_TRUE(made) << made.error().message;
  }
  const std::string client_id = "tls-operator-app";
  auto authorize = c.Request(
      "GET",
      "/oauth/authorize?response_type=code&client_id=" + client_id +
          "&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&state=s1&prompt=none"
          "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
          "&resource=https%3A%2F%2F127.0.0.1%3A" +
          std::to_string(port_) + "%2Fmcp");
  ASSERT_TRUE(authorize.has_value());
  ASSERT_EQ(authorize->status, 302) << authorize->body;
  const std::string location = authorize->Header("location").value_or("");
  EXPECT_NE(location.find("error=login_required"), std::string::npos) << location;
  EXPECT_NE(location.find("iss=https%3A%2F%2F127.0.0.1%3A" + std::to_string(port_)),
            std::string::npos)
      << location;
}

TEST_F(Https, SighupReloadsTheCertificateWithoutDroppingConnections) {
  TlsConnection old_conn(port_, ca());
  ASSERT_TRUE(old_conn.ok()) << old_conn.error();
  ASSERT_EQ(old_conn.Fingerprint(), first_fingerprint_);
  auto before = old_conn.Request("GET", "/healthz");
  ASSERT_TRUE(before.has_value());
  ASSERT_EQ(before->status, 200);

  // The renewal: new files in place (as certbot or an operator would), then SIGHUP.
  const std::string renewed = MakeCert(certs_, "renewed");
  ASSERT_EQ(renewed.size(), 64u);
  ASSERT_NE(renewed, first_fingerprint_);
  std::filesystem::copy_file(certs_ + "/renewed.pem", certs_ + "/server.pem",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(certs_ + "/renewed.key", certs_ + "/server.key",
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_EQ(kill(crmd_->pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitForLog(log_, "\"event\":\"tls_reloaded\"")) << ReadFile(log_);

  // The established connection goes on, with the certificate it was opened with.
  auto after = old_conn.Request("GET", "/healthz");
  ASSERT_TRUE(after.has_value()) << "the established connection was dropped";
  EXPECT_EQ(after->status, 200);
  EXPECT_EQ(old_conn.Fingerprint(), first_fingerprint_);
  // A new connection sees the renewed certificate.
  TlsConnection new_conn(port_, ca());
  ASSERT_TRUE(new_conn.ok()) << new_conn.error();
  EXPECT_EQ(new_conn.Fingerprint(), renewed);
  auto fresh = new_conn.Request("GET", "/healthz");
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(fresh->status, 200);
  EXPECT_EQ(Count(ReadFile(log_), "\"event\":\"shutdown\""), 0u) << "SIGHUP must not stop crmd";
}

TEST_F(Https, ABrokenRenewalOnSighupKeepsTheCurrentCertificate) {
  // A key that does not belong to the certificate (a half-finished renewal).
  MakeCert(certs_, "other");
  std::filesystem::copy_file(certs_ + "/other.key", certs_ + "/server.key",
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_EQ(kill(crmd_->pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitForLog(log_, "\"event\":\"tls_reload_failed\"")) << ReadFile(log_);
  TlsConnection c(port_, ca());
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c.Fingerprint(), first_fingerprint_);
  auto r = c.Request("GET", "/healthz");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
}

// crmd's own outbound client (webhook deliveries, Client ID Metadata Documents) verifies
// the server against the system's CA store, which it loads on its first https request:
// a client made while SSL_CERT_FILE names the test CA reaches this server, one made
// without it refuses the certificate, and neither answer depends on the other's store.
TEST_F(Https, TheOutboundClientVerifiesTheServerAgainstTheCaStoreItLoadsOnFirstUse) {
  http::ClientRequest req;
  req.url = base_ + "/healthz";
  req.allow_private = true;
  const char* before = std::getenv("SSL_CERT_FILE");
  const std::string saved = before ? before : "";
  auto trusting = http::MakeHttpClient();
  auto untrusting = http::MakeHttpClient();
  ASSERT_EQ(setenv("SSL_CERT_FILE", ca().c_str(), 1), 0);
  auto ok = trusting->Send(req);
  if (before) {
    setenv("SSL_CERT_FILE", saved.c_str(), 1);
  } else {
    unsetenv("SSL_CERT_FILE");
  }
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->status, 200);
  auto refused = untrusting->Send(req);
  ASSERT_FALSE(refused.has_value()) << "a certificate from an unknown CA was accepted";
  EXPECT_EQ(refused.error().code, Errc::kUnavailable);
  // The trusting client keeps the store it loaded.
  auto again = trusting->Send(req);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(again->status, 200);
}

// Over TLS every answer arrives whole, small or large: the content is copied after the
// head up to 64 KiB and sent in a second write beyond (a gathered write of the two over
// Beast's ssl_stream sent the head alone).
TEST(HttpsServer, AnswersOfEverySizeArriveWholeOnOneConnection) {
  testing::TempDir dir;
  MakeCert(dir.path(), "server");
  auto pattern = [](size_t n) {
    std::string s(n, ' ');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 26) % 26);
    return s;
  };
  http::Server server({.port = 0,
                       .tls_cert_file = dir.path() + "/server.pem",
                       .tls_key_file = dir.path() + "/server.key",
                       .access_log = false},
                      [&](const http::Request& req) {
                        return http::Response::Text(200, pattern(std::stoul(req.path.substr(1))));
                      });
  auto port = server.Start();
  ASSERT_TRUE(port.has_value()) << port.error().message;
  TlsConnection c(*port, dir.path() + "/ca.pem");
  ASSERT_TRUE(c.ok()) << c.error();
  for (size_t n : {0, 1, 700, 65535, 65536, 65537, 300000}) {
    auto r = c.Request("GET", "/" + std::to_string(n));
    ASSERT_TRUE(r.has_value()) << n;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->Header("content-length").value_or(""), std::to_string(n));
    EXPECT_EQ(r->Header("strict-transport-security").value_or(""), "max-age=31536000");
    EXPECT_TRUE(r->body == pattern(n)) << "content of " << n << " differs";
  }
  server.Stop();
}

}  // namespace
}  // namespace crmd

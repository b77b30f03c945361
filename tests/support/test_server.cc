#include "tests/support/test_server.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "src/app/services.h"
#include "src/governance/settings.h"
#include "src/http/client.h"

namespace crmd::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "crmd-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

TestServer::TestServer(TestServerOptions options) {
  Config cfg;
  cfg.listen_address = "127.0.0.1";
  cfg.port = 0;
  db_ = std::make_unique<ScratchDatabase>(db_path(), options.sqlite, /*migrated=*/true);
  cfg.database_url = db_->url();
  cfg.log_level = "warn";
  cfg.allow_private_network_targets = true;
  cfg.shutdown_grace_s = 2;
  cfg.mcp_validate_output = true;  // every tool result in the tests is checked against its schema
  cfg.mail_dir = dir_.path() + "/mail";  // no smtp_url: .eml files, never in the working dir
  cfg.mail_poll_interval_ms = 200;
  if (options.configure) options.configure(cfg);
  auto app = app::App::Create(cfg);
  if (!app)
    throw std::runtime_error("App::Create: " + app.error().message + " " + app.error().detail);
  app_ = std::move(*app);
  if (!options.approval_policy.is_null() || !options.company_address.empty()) {
    governance::SettingsService& settings = *app_->services().governance->settings;
    auto cur = settings.Get();
    if (!cur) throw std::runtime_error("settings: " + cur.error().message);
    nlohmann::json patch = nlohmann::json::object();
    if (!options.approval_policy.is_null()) patch["approval_policy"] = options.approval_policy;
    if (!options.company_address.empty()) patch["company_address"] = options.company_address;
    auto set = settings.Update(
        governance::Actor{.kind = "cli", .subject = "test", .client_id = {}, .request_id = {}},
        cur->revision, patch);
    if (!set) throw std::runtime_error("approval_policy: " + set.error().message);
  }
  if (options.before_start) options.before_start(app_->services());
  auto port = app_->Start();
  if (!port) throw std::runtime_error("App::Start: " + port.error().message);
  base_url_ = app_->config().Issuer();
  client_ = http::MakeHttpClient();
}

TestServer::~TestServer() {
  if (app_) app_->Stop();
}

http::ClientResponse TestServer::Send(const std::string& method, const std::string& path,
                                      const std::string& body, http::Headers headers) {
  http::ClientRequest req{.method = method,
                          .url = path.rfind("http", 0) == 0 ? path : base_url_ + path,
                          .headers = std::move(headers),
                          .body = body,
                          .timeout_ms = 10000,
                          .max_response_bytes = 16 * 1024 * 1024,
                          .allow_private = true};
  auto res = client_->Send(req);
  if (!res)
    throw std::runtime_error("HTTP " + method + " " + path + ": " + res.error().message + " " +
                             res.error().detail);
  return *res;
}

http::ClientResponse TestServer::PostJson(const std::string& path, const nlohmann::json& body,
                                          http::Headers headers) {
  headers.emplace_back("Content-Type", "application/json");
  return Send("POST", path, body.dump(), std::move(headers));
}

http::ClientResponse TestServer::PostForm(const std::string& path, const std::string& form_body,
                                          http::Headers headers) {
  headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  return Send("POST", path, form_body, std::move(headers));
}

nlohmann::json AssistantMayConfirmAlone() { return {{"require_person", nlohmann::json::array()}}; }

nlohmann::json JsonBody(const http::ClientResponse& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON: " << r.body;
  return j;
}

}  // namespace crmd::testing

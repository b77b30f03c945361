#pragma once
// A real crmd on 127.0.0.1, port 0, with a fresh database (a SQLite file in a temporary
// folder, or a fresh PostgreSQL database when the tests run on PostgreSQL: see
// tests/support/test_database.h), and a blocking HTTP client for talking to it over
// loopback.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "src/app/app.h"
#include "src/core/config.h"
#include "src/core/http_client.h"
#include "tests/support/test_database.h"

namespace crmd::testing {

// A fresh empty folder under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct TestServerOptions {
  // Always a SQLite file, also when the suite runs on PostgreSQL (e.g. the source site of
  // crmctl copy).
  bool sqlite = false;
  // Applied to the config before the app is created (e.g. allowed_origins).
  std::function<void(Config&)> configure;
  // Called after App::Create and before Start: tests register test-only tools or set
  // hooks (e.g. services.authenticate) here.
  std::function<void(app::App::Services&)> before_start;
  // The settings' approval_policy, set as the operator would (crmctl) before the server
  // starts; null keeps the product default (every confirmable action needs the person).
  // Suites about other things than human approval pass AssistantMayConfirmAlone().
  nlohmann::json approval_policy;
  // The settings' company_address (the postal address the pre-send check requires),
  // set with approval_policy; empty: left unset.
  std::string company_address;
};

// {"require_person": []}: the assistant confirms every action alone.
nlohmann::json AssistantMayConfirmAlone();

class TestServer {
 public:
  explicit TestServer(TestServerOptions options = {});
  ~TestServer();

  const std::string& base_url() const { return base_url_; }  // http://127.0.0.1:<port>
  app::App& app() { return *app_; }
  const std::string& dir() const { return dir_.path(); }
  std::string db_path() const { return dir_.path() + "/crmd.db"; }
  // The server's database_url (sqlite:<db_path()> or a postgresql:// URL).
  const std::string& database_url() const { return db_->url(); }

  // Sends a request to the server (loopback allowed). `path` is appended to base_url().
  http::ClientResponse Send(const std::string& method, const std::string& path,
                            const std::string& body = "", http::Headers headers = {});
  http::ClientResponse Get(const std::string& path, http::Headers headers = {}) {
    return Send("GET", path, "", std::move(headers));
  }
  http::ClientResponse PostJson(const std::string& path, const nlohmann::json& body,
                                http::Headers headers = {});
  http::ClientResponse PostForm(const std::string& path, const std::string& form_body,
                                http::Headers headers = {});

 private:
  TempDir dir_;
  std::unique_ptr<ScratchDatabase> db_;
  std::unique_ptr<app::App> app_;
  std::unique_ptr<http::HttpClient> client_;
  std::string base_url_;
};

// Parses a JSON body; a parse failure is a test failure with the body shown.
nlohmann::json JsonBody(const http::ClientResponse& r);

}  // namespace crmd::testing

#pragma once
// A real crmd (TestServer) with the marketing tools, reached through /mcp with McpClient.
// Bearer tokens are real (MintTestToken). Rows of the contacts module
// (contacts, lists, tags, memberships) are written straight into the database file.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/store/db.h"
#include "tests/support/mcp_client.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd::testing {

inline const char* kAllMarketingScopes =
    "campaigns:read,campaigns:write,campaigns:activate,campaigns:delete,automations:read,"
    "automations:write,automations:activate,automations:delete,sequences:read,sequences:write,"
    "reports:read,lists:read,lists:delete,tags:read,tags:delete";

class MarketingTools : public ::testing::Test {
 protected:
  explicit MarketingTools(TestServerOptions options = {});

  // A client that has run initialize. `scopes` comma-separated.
  std::unique_ptr<McpClient> Client(const std::string& scopes = kAllMarketingScopes,
                                    const std::string& client_id = "client-a",
                                    const std::string& subject = "alice");
  // tools/call; the reply's structuredContent (success or tool error body).
  nlohmann::json Call(McpClient& c, const std::string& tool, const nlohmann::json& args);
  // Expects a tool error with `code`; returns the error object.
  nlohmann::json ExpectToolError(McpClient& c, const std::string& tool, const nlohmann::json& args,
                                 const std::string& code);

  int64_t AddList(const std::string& name);
  int64_t AddTag(const std::string& name);
  int64_t AddContact(const std::string& email, const std::string& status = "subscribed");
  void InList(int64_t contact, int64_t list);
  void Tagged(int64_t contact, int64_t tag);
  int64_t Count(const std::string& sql, const std::vector<store::Value>& params = {});
  void Exec(const std::string& sql, const std::vector<store::Value>& params = {});

  // A campaign ready for activation, audience = one list with two subscribed contacts;
  // its body has the unsubscribe link the pre-send check requires.
  int64_t ReadyCampaign(McpClient& c);

  TestServer server_;
  std::unique_ptr<store::Database> db_;
};

}  // namespace crmd::testing

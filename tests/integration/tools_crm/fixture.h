#pragma once
// A real crmd (TestServer) reached through /mcp with McpClient and real bearer tokens
// (MintTestToken), for the CRM tools: contacts, lists, tags, settings and confirm_action.
// Records are made through the tools themselves; the database file is only read, to take
// a fingerprint that shows a refused call changed nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/store/db.h"
#include "tests/support/mcp_client.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd::testing {

struct CrmClientOptions {
  std::vector<std::string> scopes;  // empty: every scope (auth::AllScopes)
  std::string client_id = "client-a";
  std::string subject = "alice";
};

class CrmTools : public ::testing::Test {
 protected:
  CrmTools();

  // A client that has run initialize.
  std::unique_ptr<McpClient> Client(const CrmClientOptions& options = {});
  // The same OAuth client and user with every scope but `scope`.
  std::unique_ptr<McpClient> ClientWithout(const std::string& scope);

  // tools/call that must succeed: its structuredContent.
  nlohmann::json Ok(McpClient& c, const std::string& tool, const nlohmann::json& args);
  // tools/call that must be a tool error with `code`: the error object.
  nlohmann::json Err(McpClient& c, const std::string& tool, const nlohmann::json& args,
                     const std::string& code);

  int64_t NewContact(McpClient& c, const std::string& email,
                     const nlohmann::json& fields = nlohmann::json::object());
  int64_t NewList(McpClient& c, const std::string& name);
  int64_t NewTag(McpClient& c, const std::string& name);
  // A confirmation tool's first call: expects confirmation_required, returns the token.
  std::string Preview(McpClient& c, const std::string& tool, const nlohmann::json& args);
  // get_contact by id; null (no test failure) when it is not_found.
  nlohmann::json FindContact(McpClient& c, int64_t id);

  // A campaign whose audience is `list`, activated through confirm_action (status sending).
  int64_t SendingCampaign(McpClient& c, int64_t list);
  // An automation triggered by `tag`, activated through confirm_action (status active).
  int64_t ActiveAutomation(McpClient& c, int64_t tag);

  // Counts and revision sums of everything a CRM tool can change (records, memberships,
  // audit, events, idempotency keys, confirmations, settings): equal fingerprints mean
  // nothing was written in between.
  nlohmann::json Fingerprint();
  int64_t Count(const std::string& sql, const std::vector<store::Value>& params = {});

  TestServer server_;
  std::unique_ptr<store::Database> db_;
};

}  // namespace crmd::testing

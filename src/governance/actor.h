#pragma once
// Who performs a change: carried from every face (MCP tool, REST, form, webhook, crmctl)
// into the crm services for the audit log and for binding confirmations. A plain value.
#include <string>

namespace crmd::governance {

struct Actor {
  std::string kind;        // "oauth" | "api_key" | "form" | "webhook" | "cli" | "system"
  std::string subject;     // user id (sub), api key id, form id, ...
  std::string client_id;   // OAuth client, empty for other kinds
  std::string request_id;  // for correlating logs and audit rows
};

}  // namespace crmd::governance

#pragma once
// Helpers shared by the CRM tool handlers: the caller as a crm::Actor, mapping service
// results to tool outcomes with TOOLS.md's error codes, argument readers, and RFC 3339
// parsing. Pure functions; thread-safe.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/result.h"
#include "src/crm/actor.h"
#include "src/crm/confirmations.h"
#include "src/crm/contacts.h"
#include "src/mcp/tool.h"

namespace crmd::tools {

crm::Actor ActorFrom(const mcp::ToolContext& ctx);

// Errors outside TOOLS.md's codes are mapped: kAlreadyExists -> validation_failed.
mcp::ToolOutcome FailWith(Error e, nlohmann::json details = nullptr);
mcp::ToolOutcome FromResult(Result<nlohmann::json> r);
mcp::ToolOutcome FromConfirm(crm::ConfirmOutcome r);

// Argument readers (the schema has already checked types; these tolerate absence).
std::optional<std::string> OptString(const nlohmann::json& args, const char* key);
std::optional<int64_t> OptInt(const nlohmann::json& args, const char* key);
int Limit(const nlohmann::json& args);  // default 25, max 100
std::optional<crm::Ref> OptRef(const nlohmann::json& args, const char* key);
std::vector<int64_t> Ids(const nlohmann::json& args, const char* key);

// "2026-01-31", "2026-01-31T10:00:00Z", "2026-01-31T10:00:00+02:00" -> unix seconds.
Result<int64_t> ParseRfc3339(const std::string& s);

nlohmann::json PageJson(nlohmann::json items, const std::optional<std::string>& next_cursor);

}  // namespace crmd::tools

#pragma once
// Helpers shared by every tool handler (CRM and marketing): the caller as a governance::Actor,
// the one mapping from service errors to tool errors, argument readers, and RFC 3339
// parsing. Pure functions; thread-safe.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "src/core/result.h"
#include "src/crm/contacts.h"
#include "src/governance/actor.h"
#include "src/governance/confirmations.h"
#include "src/mcp/tool.h"

namespace crmd::tools {

governance::Actor ActorFrom(const mcp::ToolContext& ctx);

// The tool face's error vocabulary, in one place. TOOLS.md's codes pass through; the
// others are mapped: kAlreadyExists -> validation_failed (a duplicate is a problem with
// the arguments; FailDuplicate adds details.existing_id). Every tool error goes through
// here, including per-item errors inside a result (ErrorJson).
Error ForClient(Error e);
// {"code", "message"} of one item's failure inside a successful result (bulk tools).
nlohmann::json ErrorJson(const Error& e);
mcp::ToolOutcome FailWith(Error e, nlohmann::json details = nullptr);
mcp::ToolOutcome FromResult(Result<nlohmann::json> r);
mcp::ToolOutcome FromConfirm(governance::ConfirmOutcome r);
// A create that hit a unique key: validation_failed with details.existing_id (when the
// record in the way is known) and a hint naming the tool that changes it.
mcp::ToolOutcome FailDuplicate(Error e, std::optional<int64_t> existing_id,
                               const std::string& update_tool);

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

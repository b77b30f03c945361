#pragma once
// Helpers shared by the marketing tools (campaigns, automations, sequences, reports):
// the caller as a crm::Actor, error outcomes, idempotent creates and confirmation
// requests. Stateless; thread-safe.
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/result.h"
#include "src/crm/actor.h"
#include "src/crm/services.h"
#include "src/mcp/tool.h"

namespace crmd::tools::marketing {

crm::Actor ActorOf(const mcp::ToolContext& ctx);

int64_t IntArg(const nlohmann::json& args, const char* key, int64_t fallback = 0);
std::string StrArg(const nlohmann::json& args, const char* key, const std::string& fallback = "");

// Tool arguments without the bookkeeping keys (id, expected_revision, idempotency_key), i.e.
// the record fields to apply.
nlohmann::json FieldsOf(const nlohmann::json& args);

// Runs `create` in one transaction with the idempotency store: a repeat of the same
// idempotency_key from the same client within 24 h returns the first result.
mcp::ToolOutcome IdempotentCreate(
    crm::Services& s, const mcp::ToolContext& ctx, const nlohmann::json& args,
    const std::string& tool,
    const std::function<Result<nlohmann::json>(store::Conn&, const crm::Actor&)>& create);

// Step 1 of a confirmable action: {"status":"confirmation_required", preview, token, ...}
// or the preview's error (not_found, validation_failed, dependency_blocked with blockers).
mcp::ToolOutcome RequestConfirmation(crm::Services& s, const mcp::ToolContext& ctx,
                                     const std::string& action, const nlohmann::json& args);

// A failed write; on revision_conflict `current` (the record as it is now) goes into the
// error details so the model can retry with its revision.
template <typename T, typename Current>
mcp::ToolOutcome WriteOutcome(Result<T> r, const char* key, Current current) {
  if (r) return mcp::ToolOutcome::Ok({{key, ToJson(*r, true)}});
  if (r.error().code == Errc::kRevisionConflict) {
    nlohmann::json details = {{"current", current()}};
    return mcp::ToolOutcome::Fail(std::move(r.error()), std::move(details));
  }
  return mcp::ToolOutcome::Fail(std::move(r.error()));
}

}  // namespace crmd::tools::marketing

#include "tools/confirm.h"

#include "tools/common.h"

namespace crmd::tools {

using nlohmann::json;

Status RegisterConfirmTools(mcp::ToolRegistry& registry, crm::Services& s) {
  // No tool-level scope: the pending action's own scope is checked by the service, and a
  // missing one becomes a 403 step-up naming it.
  return registry.Register("confirm_action", [&s](const mcp::ToolContext& ctx, const json& args) {
    return FromConfirm(s.confirmations->Confirm(ActorFrom(ctx), ctx.principal.scopes,
                                                args.value("confirmation_token", "")));
  });
}

}  // namespace crmd::tools

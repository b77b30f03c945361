#include "tools/confirm.h"

#include "tools/common.h"

namespace crmd::tools {

using nlohmann::json;

namespace {

constexpr const char* kApprovalInput = "approval";
constexpr const char* kApprovalMessage =
    "This action needs your approval. Open the page, sign in to crmd, check what will happen "
    "and choose Approve or Deny; then continue here.";

// MCP 2026-07-28 clients that declare URL-mode elicitation get the approval page as an
// input request (basic/patterns/mrtr): the client shows the URL to the person and retries
// the same confirm_action; each retry checks the approval again. Nothing secret is in the
// state (the client can read it): the approval id is in the URL it is shown anyway.
mcp::ToolOutcome AskForApproval(const json& details, int round) {
  std::string url = details.value("approval_url", "");
  return mcp::ToolOutcome::NeedInput(
      json{{kApprovalInput, mcp::ElicitUrl(kApprovalMessage, url)}},
      json{{"approval_id", details.value("approval_id", "")}, {"round", round}});
}

}  // namespace

Status RegisterConfirmTools(mcp::ToolRegistry& registry, marketing::Services& s) {
  // No tool-level scope: the pending action's own scope is checked by the service, and a
  // missing one becomes a 403 step-up naming it.
  return registry.Register("confirm_action", [&s](const mcp::ToolContext& ctx, const json& args) {
    governance::ConfirmOutcome out = s.governance.confirmations->Confirm(
        ActorFrom(ctx), ctx.principal.scopes, args.value("confirmation_token", ""));
    if (!out.result && out.result.error().code == Errc::kApprovalPending && ctx.CanRequestInput() &&
        ctx.SupportsElicitation("url")) {
      int round = ctx.input ? ctx.input->state.value("round", 0) : 0;
      const json* answer = nullptr;
      if (ctx.input && ctx.input->responses.is_object() &&
          ctx.input->responses.contains(kApprovalInput))
        answer = &ctx.input->responses[kApprovalInput];
      // The person declined or dismissed the page without deciding: stop asking, and say
      // so as the tool error (the assistant may ask again later).
      if (answer && answer->is_object() && answer->value("action", "") != "accept")
        return FromConfirm(std::move(out));
      // Ask again (also when the client says "accept" but the page was not used yet), a
      // bounded number of times so that a looping client ends with the tool error.
      if (round < 5) return AskForApproval(out.error_details, round + 1);
    }
    // A 2025-era client that declared URL-mode elicitation: URLElicitationRequiredError
    // with the approval page; the client shows it and retries confirm_action.
    if (!out.result && out.result.error().code == Errc::kApprovalPending &&
        ctx.session_url_elicitation) {
      std::string url = out.error_details.value("approval_url", "");
      std::string id = out.error_details.value("approval_id", "");
      if (!url.empty() && !id.empty()) {
        return mcp::ToolOutcome::UrlElicitationRequired(
            "This action needs the person's approval: open the page, sign in to crmd and "
            "choose Approve or Deny, then call confirm_action again.",
            json::array({json{{"mode", "url"},
                              {"elicitationId", id},
                              {"url", url},
                              {"message", kApprovalMessage}}}));
      }
    }
    return FromConfirm(std::move(out));
  });
}

}  // namespace crmd::tools

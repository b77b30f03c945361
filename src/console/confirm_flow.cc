#include "src/console/confirm_flow.h"

namespace crmd::console {

governance::Actor ConsoleActor(const Person& p, const http::Request& req) {
  return {.kind = "user",
          .subject = p.subject,
          .client_id = kConsoleClientId,
          .request_id = req.request_id};
}

Status ApproveOwnAction(governance::ConfirmationService& confirmations, const http::Request& req,
                        const Person& p, const std::string& approval_id) {
  auto a = confirmations.GetApproval(approval_id);
  if (!a || a->subject != p.subject || a->client_id != kConsoleClientId)
    return Fail(Errc::kInvalidArgument, "this approval is not for your confirmation");
  if (a->status != "pending") return Ok();
  auto st = confirmations.Decide(approval_id, ConsoleActor(p, req), true, p.is_admin);
  if (!st && st.error().code == Errc::kStalePreview) return Ok();
  return st;
}

}  // namespace crmd::console

#include "src/core/result.h"

namespace crmd {

const char* ErrcCode(Errc code) {
  switch (code) {
    case Errc::kInvalidArgument:
      return "validation_failed";
    case Errc::kNotFound:
      return "not_found";
    case Errc::kAlreadyExists:
      return "already_exists";
    case Errc::kRevisionConflict:
      return "revision_conflict";
    case Errc::kInvalidTransition:
      return "invalid_transition";
    case Errc::kDependencyBlocked:
      return "dependency_blocked";
    case Errc::kConfirmationInvalid:
      return "confirmation_invalid";
    case Errc::kConfirmationExpired:
      return "confirmation_expired";
    case Errc::kStalePreview:
      return "stale_preview";
    case Errc::kApprovalPending:
      return "approval_pending";
    case Errc::kApprovalDenied:
      return "approval_denied";
    case Errc::kSuppressed:
      return "suppressed";
    case Errc::kUnauthenticated:
      return "unauthenticated";
    case Errc::kPermissionDenied:
      return "forbidden";
    case Errc::kRateLimited:
      return "rate_limited";
    case Errc::kPayloadTooLarge:
      return "payload_too_large";
    case Errc::kUnavailable:
      return "unavailable";
    case Errc::kInternal:
      return "internal";
  }
  return "internal";
}

}  // namespace crmd

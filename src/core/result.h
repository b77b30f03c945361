#pragma once
// Errors are values. Every module returns Result<T>; each face (OAuth, JSON-RPC, tool,
// REST) maps Errc to its own wire shape in exactly one place.
#include <string>
#include <tl/expected.hpp>
#include <utility>

namespace crmd {

enum class Errc {
  kInvalidArgument,      // malformed or failing validation (tool: validation_failed)
  kNotFound,             // not_found
  kAlreadyExists,        // unique key taken
  kRevisionConflict,     // revision_conflict
  kInvalidTransition,    // invalid_transition
  kDependencyBlocked,    // dependency_blocked
  kConfirmationInvalid,  // confirmation_invalid
  kConfirmationExpired,  // confirmation_expired
  kStalePreview,         // stale_preview
  kApprovalPending,      // approval_pending: the person has not approved yet
  kApprovalDenied,       // approval_denied: the person said no
  kSuppressed,           // suppressed: the address is on the suppression list
  kUnauthenticated,      // 401
  kPermissionDenied,     // 403
  kRateLimited,          // 429 / rate_limited
  kPayloadTooLarge,      // 413
  kUnavailable,          // 503: dependency down, retry later
  kInternal,             // 500: never echo detail to the client
};

// Stable machine code for an Errc ("not_found", "revision_conflict", ...).
const char* ErrcCode(Errc code);

struct Error {
  Errc code = Errc::kInternal;
  std::string message;  // client-facing, safe to show
  std::string detail;   // internal only: logs, never responses

  static Error Invalid(std::string msg) { return {Errc::kInvalidArgument, std::move(msg), {}}; }
  static Error NotFound(std::string msg) { return {Errc::kNotFound, std::move(msg), {}}; }
  static Error Internal(std::string detail) {
    return {Errc::kInternal, "internal error", std::move(detail)};
  }
};

template <typename T>
using Result = tl::expected<T, Error>;
using Status = tl::expected<void, Error>;

inline tl::unexpected<Error> Fail(Errc code, std::string message, std::string detail = {}) {
  return tl::unexpected<Error>(Error{code, std::move(message), std::move(detail)});
}
inline tl::unexpected<Error> Fail(Error e) { return tl::unexpected<Error>(std::move(e)); }

inline Status Ok() { return {}; }

// The outcome of a Result without its value (an Exec's row count, say).
template <typename T>
Status Discard(const Result<T>& r) {
  if (!r) return Fail(r.error());
  return Ok();
}

}  // namespace crmd

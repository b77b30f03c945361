#pragma once
// RFC 9457 problem details: the one place where the REST face turns errors into HTTP.
// Every REST error body is application/problem+json with type, title, status, detail,
// code (stable, machine-readable), instance and request_id, and errors[] for field errors.
#include <string>
#include <string_view>
#include <vector>

#include "src/core/http_types.h"
#include "src/core/result.h"

namespace crmd::rest {

struct FieldError {
  std::string field;    // "email", "fields.first_name", "data.customer.emails[0].address"
  std::string code;     // "required", "invalid_email", "unknown_field", "invalid_option", ...
  std::string message;  // human-readable
};

struct ProblemSpec {
  int status = 500;
  std::string code;    // stable: "validation_failed", "unauthenticated", ...
  std::string detail;  // safe to show the client
  std::vector<FieldError> errors;
  int retry_after_s = 0;  // 429/503: Retry-After header when > 0
};

// "urn:crmd:problem:<code>" for a code.
std::string ProblemType(std::string_view code);
// Title for an HTTP status ("Unprocessable Content", ...).
const char* StatusTitle(int status);

http::Response Problem(const http::Request& req, const ProblemSpec& spec);

// Maps a domain Error: kInvalidArgument -> 422 validation_failed, kNotFound -> 404,
// kAlreadyExists/kRevisionConflict -> 409, kInvalidTransition -> 409 invalid_transition,
// kUnauthenticated -> 401, kPermissionDenied -> 403, kRateLimited -> 429,
// kPayloadTooLarge -> 413, kUnavailable -> 503, anything else -> 500 without detail.
http::Response ProblemFromError(const http::Request& req, const Error& error,
                                std::vector<FieldError> errors = {});
int HttpStatusFor(Errc code);

}  // namespace crmd::rest

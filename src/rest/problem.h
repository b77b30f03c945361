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

// What a route's errors are about, for the few meanings an error code alone cannot
// carry. Data, not code: the defaults suit most routes, and every decision about status,
// code and errors[] stays in ProblemFromError.
struct ErrorMeaning {
  // kNotFound: 404 with this code and detail (empty detail: the error's message).
  std::string not_found_code = "not_found";
  std::string not_found_detail;
  // The path names the resource, so a malformed name is simply not found (404), as for
  // GET /contact/{email} with an invalid email.
  bool invalid_is_not_found = false;
  // kNotFound is about a list or tag the body names, not the URL: 422 validation_failed
  // with a field error on "lists"/"tags" (unknown_list/unknown_tag).
  bool not_found_in_body = false;
  // The member a kInvalidTransition is about ("status"), named in errors[].
  std::string transition_field;
  // kPermissionDenied refuses a target the body names, not the caller (the SSRF check of
  // a webhook URL): 422 with this code and a field error on refused_target_field.
  std::string refused_target_code;
  std::string refused_target_field;
  // kUnauthenticated: the code of the 401 ("invalid_signature", "invalid_api_key").
  std::string unauthenticated_code;
  // Field errors the caller already knows (payload paths); otherwise they come from the
  // error (see below).
  std::vector<FieldError> errors;
};

// The one mapping from a domain Error to a problem: kInvalidArgument -> 422
// validation_failed with errors[] (from `meaning.errors`, else the error's detail when it is
// a JSON array of {field, code, message}, else one error naming the field the message
// starts with), kNotFound -> 404, kAlreadyExists/kRevisionConflict -> 409,
// kInvalidTransition -> 409 invalid_transition, kUnauthenticated -> 401,
// kPermissionDenied -> 403, kRateLimited -> 429, kPayloadTooLarge -> 413,
// kUnavailable -> 503, anything else -> 500 without detail; `meaning` refines these.
http::Response ProblemFromError(const http::Request& req, const Error& error,
                                const ErrorMeaning& meaning = {});
int HttpStatusFor(Errc code);

}  // namespace crmd::rest

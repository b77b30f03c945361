#include "src/rest/problem.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "src/core/log.h"

namespace crmd::rest {

std::string ProblemType(std::string_view code) { return "urn:crmd:problem:" + std::string(code); }

const char* StatusTitle(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 503: return "Service Unavailable";
    default: return status >= 500 ? "Internal Server Error" : "Error";
  }
}

http::Response Problem(const http::Request& req, const ProblemSpec& spec) {
  nlohmann::json body = {
      {"type", ProblemType(spec.code)},
      {"title", StatusTitle(spec.status)},
      {"status", spec.status},
      {"detail", spec.detail},
      {"code", spec.code},
      {"instance", "urn:crmd:request:" + req.request_id},
      {"request_id", req.request_id},
  };
  if (!spec.errors.empty()) {
    auto& errs = body["errors"] = nlohmann::json::array();
    for (const auto& e : spec.errors)
      errs.push_back({{"field", e.field}, {"code", e.code}, {"message", e.message}});
  }
  auto r = http::Response::Json(spec.status, body);
  r.Set("Content-Type", "application/problem+json");
  r.Set("Cache-Control", "no-store");
  if (spec.retry_after_s > 0) r.Set("Retry-After", std::to_string(spec.retry_after_s));
  if (spec.status == 401) r.Set("WWW-Authenticate", "Bearer realm=\"crmd-rest\"");
  return r;
}

int HttpStatusFor(Errc code) {
  switch (code) {
    case Errc::kInvalidArgument: return 422;
    case Errc::kNotFound: return 404;
    case Errc::kAlreadyExists:
    case Errc::kRevisionConflict:
    case Errc::kInvalidTransition:
    case Errc::kDependencyBlocked:
    case Errc::kStalePreview: return 409;
    case Errc::kConfirmationInvalid:
    case Errc::kConfirmationExpired: return 422;
    case Errc::kUnauthenticated: return 401;
    case Errc::kPermissionDenied: return 403;
    case Errc::kRateLimited: return 429;
    case Errc::kPayloadTooLarge: return 413;
    case Errc::kUnavailable: return 503;
    case Errc::kInternal: return 500;
  }
  return 500;
}

http::Response ProblemFromError(const http::Request& req, const Error& error,
                                std::vector<FieldError> errors) {
  int status = HttpStatusFor(error.code);
  std::string code = error.code == Errc::kInvalidArgument ? "validation_failed" : ErrcCode(error.code);
  std::string detail = error.message;
  if (status >= 500) {
    // Internals go to the log with the request id, never to the client.
    spdlog::error(R"("event":"rest_error","request_id":"{}","code":"{}","detail":"{}")",
                  req.request_id, ErrcCode(error.code),
                  JsonEscape(error.detail.empty() ? error.message : error.detail));
    if (status == 500) detail = "internal error";
  }
  return Problem(req, {.status = status, .code = code, .detail = detail, .errors = std::move(errors),
                       .retry_after_s = status == 503 ? 1 : 0});
}

}  // namespace crmd::rest

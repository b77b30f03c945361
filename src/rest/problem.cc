#include "src/rest/problem.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "src/core/log.h"

namespace crmd::rest {

std::string ProblemType(std::string_view code) { return "urn:crmd:problem:" + std::string(code); }

const char* StatusTitle(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 503:
      return "Service Unavailable";
    default:
      return status >= 500 ? "Internal Server Error" : "Error";
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
    case Errc::kInvalidArgument:
      return 422;
    case Errc::kNotFound:
      return 404;
    case Errc::kAlreadyExists:
    case Errc::kRevisionConflict:
    case Errc::kInvalidTransition:
    case Errc::kDependencyBlocked:
    case Errc::kStalePreview:
    case Errc::kApprovalPending:
    case Errc::kApprovalDenied:
    case Errc::kSuppressed:
      return 409;
    case Errc::kConfirmationInvalid:
    case Errc::kConfirmationExpired:
      return 422;
    case Errc::kUnauthenticated:
      return 401;
    case Errc::kPermissionDenied:
      return 403;
    case Errc::kRateLimited:
      return 429;
    case Errc::kPayloadTooLarge:
      return 413;
    case Errc::kUnavailable:
      return 503;
    case Errc::kInternal:
      return 500;
  }
  return 500;
}

namespace {

// errors[] of a kInvalidArgument: the service's field errors when its detail carries them (a
// JSON array of {field, code, message}), else one error naming the field that the message
// starts with ("email is not valid ...").
std::vector<FieldError> FieldErrorsOf(const Error& error) {
  std::vector<FieldError> errors;
  auto detail = nlohmann::json::parse(error.detail, nullptr, false);
  if (detail.is_array()) {
    for (const auto& e : detail)
      if (e.is_object())
        errors.push_back(
            {e.value("field", ""), e.value("code", "invalid"), e.value("message", "")});
  }
  if (!errors.empty()) return errors;
  const std::string& m = error.message;
  size_t end = 0;
  while (end < m.size() && (std::isalnum(static_cast<unsigned char>(m[end])) || m[end] == '_' ||
                            m[end] == '.' || m[end] == '[' || m[end] == ']'))
    ++end;
  std::string field = end > 0 && end < m.size() ? m.substr(0, end) : "";
  if (field == "tag") field = "tags";  // "tag name ..." is about the tags member
  if (field == "list") field = "lists";
  std::string code = m.find("email") == 0 && m.find("not valid") != std::string::npos
                         ? "invalid_email"
                         : "invalid";
  errors.push_back({field, code, m});
  return errors;
}

}  // namespace

http::Response ProblemFromError(const http::Request& req, const Error& error,
                                const ErrorMeaning& meaning) {
  const std::string& m = error.message;
  bool not_found = error.code == Errc::kNotFound ||
                   (error.code == Errc::kInvalidArgument && meaning.invalid_is_not_found);
  if (not_found && meaning.not_found_in_body && error.code == Errc::kNotFound) {
    bool tag = m.rfind("tag", 0) == 0;
    FieldError unknown{tag ? "tags" : "lists", tag ? "unknown_tag" : "unknown_list", m};
    return Problem(
        req,
        {.status = 422, .code = "validation_failed", .detail = m, .errors = {std::move(unknown)}});
  }
  if (not_found)
    return Problem(req,
                   {.status = 404,
                    .code = meaning.not_found_code,
                    .detail = meaning.not_found_detail.empty() ? m : meaning.not_found_detail});
  switch (error.code) {
    case Errc::kInvalidArgument:
      return Problem(req,
                     {.status = 422,
                      .code = "validation_failed",
                      .detail = m,
                      .errors = meaning.errors.empty() ? FieldErrorsOf(error) : meaning.errors});
    case Errc::kInvalidTransition: {
      std::vector<FieldError> errors;
      if (!meaning.transition_field.empty())
        errors.push_back({meaning.transition_field, "invalid_transition", m});
      return Problem(
          req,
          {.status = 409, .code = "invalid_transition", .detail = m, .errors = std::move(errors)});
    }
    case Errc::kSuppressed:
      // The address of the body (POST /contact, an incoming webhook's payload) is the
      // member that is refused.
      return Problem(req, {.status = 409,
                           .code = ErrcCode(error.code),
                           .detail = m,
                           .errors = {{"email", ErrcCode(error.code), m}}});
    case Errc::kPermissionDenied:
      if (!meaning.refused_target_code.empty())
        return Problem(
            req, {.status = 422,
                  .code = meaning.refused_target_code,
                  .detail = m,
                  .errors = {{meaning.refused_target_field, meaning.refused_target_code, m}}});
      break;
    case Errc::kUnauthenticated:
      if (!meaning.unauthenticated_code.empty())
        return Problem(req, {.status = 401, .code = meaning.unauthenticated_code, .detail = m});
      break;
    default:
      break;
  }
  int status = HttpStatusFor(error.code);
  std::string detail = m;
  if (status >= 500) {
    // Internals go to the log with the request id, never to the client.
    spdlog::error(R"("event":"rest_error","request_id":"{}","code":"{}","detail":"{}")",
                  req.request_id, ErrcCode(error.code),
                  JsonEscape(error.detail.empty() ? error.message : error.detail));
    if (status == 500) detail = "internal error";
  }
  return Problem(req, {.status = status,
                       .code = ErrcCode(error.code),
                       .detail = detail,
                       .errors = meaning.errors,
                       .retry_after_s = status == 503 ? 1 : 0});
}

}  // namespace crmd::rest

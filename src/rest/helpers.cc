#include "src/rest/helpers.h"

#include <charconv>

namespace crmd::rest {

std::optional<int64_t> ParseId(std::string_view s) {
  int64_t v = 0;
  if (s.empty() || s.size() > 18) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

http::Response Reply(int status, const nlohmann::json& body) {
  auto r = http::Response::Json(status, body);
  r.Set("Cache-Control", "no-store");
  return r;
}

http::Response Invalid(const http::Request& req, std::vector<FieldError> errors,
                       std::string detail) {
  if (errors.size() == 1 && detail == "the request failed validation")
    detail = errors.front().field + ": " + errors.front().message;
  return Problem(req, {.status = 422,
                       .code = "validation_failed",
                       .detail = std::move(detail),
                       .errors = std::move(errors)});
}

void UnknownMembers(const nlohmann::json& obj, std::initializer_list<const char*> known,
                    std::vector<FieldError>* errors) {
  if (!obj.is_object()) return;
  for (const auto& [k, v] : obj.items()) {
    bool ok = false;
    for (const char* m : known) ok = ok || k == m;
    if (!ok) errors->push_back({k, "unknown_member", "is not a member of this request"});
  }
}

http::Response NotFound(const http::Request& req, std::string detail) {
  return Problem(req, {.status = 404, .code = "not_found", .detail = std::move(detail)});
}

std::optional<std::string> OptString(const nlohmann::json& obj, const char* name,
                                     std::vector<FieldError>* errors) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) {
    errors->push_back({name, "invalid_type", "must be a string"});
    return std::nullopt;
  }
  return it->get<std::string>();
}

std::optional<std::vector<std::string>> OptStringArray(const nlohmann::json& obj, const char* name,
                                                       std::vector<FieldError>* errors) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) {
    errors->push_back({name, "invalid_type", "must be an array of strings"});
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string()) {
      errors->push_back({name, "invalid_type", "must be an array of strings"});
      return std::nullopt;
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::optional<bool> OptBool(const nlohmann::json& obj, const char* name,
                            std::vector<FieldError>* errors) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) {
    errors->push_back({name, "invalid_type", "must be a boolean"});
    return std::nullopt;
  }
  return it->get<bool>();
}

}  // namespace crmd::rest

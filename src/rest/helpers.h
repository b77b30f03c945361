#pragma once
// Small helpers shared by the REST route groups.
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/http_types.h"
#include "src/rest/problem.h"

namespace crmd::rest {

// A positive decimal id from a path segment; nullopt otherwise.
std::optional<int64_t> ParseId(std::string_view s);

// JSON reply for API data: never cached.
http::Response Reply(int status, const nlohmann::json& body);

// 422 validation_failed with field errors.
http::Response Invalid(const http::Request& req, std::vector<FieldError> errors,
                       std::string detail = "the request failed validation");
http::Response NotFound(const http::Request& req, std::string detail);

// Reads an optional string member; a present non-string adds a field error.
std::optional<std::string> OptString(const nlohmann::json& obj, const char* name,
                                     std::vector<FieldError>* errors);
// Reads an optional array of strings; wrong shapes add a field error.
std::optional<std::vector<std::string>> OptStringArray(const nlohmann::json& obj, const char* name,
                                                       std::vector<FieldError>* errors);
// Adds an "unknown_member" error for each member of `obj` not in `known`.
void UnknownMembers(const nlohmann::json& obj, std::initializer_list<const char*> known,
                    std::vector<FieldError>* errors);
std::optional<bool> OptBool(const nlohmann::json& obj, const char* name,
                            std::vector<FieldError>* errors);

}  // namespace crmd::rest

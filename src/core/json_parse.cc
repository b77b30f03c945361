#include "src/core/json_parse.h"

#include <set>
#include <vector>

namespace crmd {

ParsedJson ParseJsonStrict(std::string_view text, int max_depth) {
  ParsedJson out;
  // One set of member names per open object; arrays push an empty marker so that the
  // stack mirrors the nesting.
  std::vector<std::set<std::string>> keys;
  auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (out.problem != JsonProblem::kNone) return false;
    switch (event) {
      case E::object_start:
      case E::array_start:
        if (depth >= max_depth) {
          out.problem = JsonProblem::kTooDeep;
          out.detail = "the document is nested deeper than " + std::to_string(max_depth) + " levels";
          return false;
        }
        keys.emplace_back();
        return true;
      case E::object_end:
      case E::array_end:
        if (!keys.empty()) keys.pop_back();
        return true;
      case E::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
          out.problem = JsonProblem::kDuplicateKey;
          out.detail = "member \"" + parsed.get<std::string>() + "\" appears twice in one object";
          return false;
        }
        return true;
      case E::value:
        return true;
    }
    return true;
  };
  nlohmann::json value = nlohmann::json::parse(text, callback, /*allow_exceptions=*/false);
  if (out.problem != JsonProblem::kNone) return out;
  if (value.is_discarded()) {
    out.problem = JsonProblem::kSyntax;
    out.detail = "the body is not valid JSON";
    return out;
  }
  out.value = std::move(value);
  return out;
}

}  // namespace crmd

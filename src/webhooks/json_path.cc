#include "src/webhooks/json_path.h"

#include <cctype>
#include <nlohmann/json.hpp>

namespace crmd::webhooks {
namespace {

bool IsNameChar(char c) {
  return c != '.' && c != '[' && c != ']' && !std::isspace(static_cast<unsigned char>(c)) &&
         static_cast<unsigned char>(c) >= 0x20;
}

tl::unexpected<Error> At(size_t pos, const std::string& what) {
  return Fail(Errc::kInvalidArgument, what + " at character " + std::to_string(pos + 1));
}

}  // namespace

Result<JsonPath> JsonPath::Parse(std::string_view text) {
  if (text.empty()) return Fail(Errc::kInvalidArgument, "the path is empty");
  if (text.size() > kMaxLength)
    return Fail(Errc::kInvalidArgument,
                "the path is longer than " + std::to_string(kMaxLength) + " characters");
  std::vector<Step> steps;
  size_t i = 0;
  while (true) {
    // A name...
    size_t start = i;
    while (i < text.size() && IsNameChar(text[i])) ++i;
    if (i == start) return At(i, i < text.size() ? "expected a name" : "expected a name after '.'");
    steps.emplace_back(std::string(text.substr(start, i - start)));
    // ...then any number of [n].
    while (i < text.size() && text[i] == '[') {
      size_t digits = ++i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      if (i == digits) return At(digits, "expected an array index (digits)");
      if (i - digits > 9) return At(digits, "array index too large");
      if (i >= text.size() || text[i] != ']') return At(i, "expected ']'");
      steps.emplace_back(
          static_cast<size_t>(std::stoul(std::string(text.substr(digits, i - digits)))));
      ++i;
    }
    if (steps.size() > kMaxSteps)
      return Fail(Errc::kInvalidArgument,
                  "the path has more than " + std::to_string(kMaxSteps) + " steps");
    if (i == text.size()) break;
    if (text[i] != '.') return At(i, std::string("unexpected '") + text[i] + "'");
    ++i;
  }
  return JsonPath(std::string(text), std::move(steps));
}

const nlohmann::json* JsonPath::Find(const nlohmann::json& doc) const {
  const nlohmann::json* cur = &doc;
  for (const Step& step : steps_) {
    if (const auto* key = std::get_if<std::string>(&step)) {
      if (!cur->is_object()) return nullptr;
      auto it = cur->find(*key);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else {
      size_t index = std::get<size_t>(step);
      if (!cur->is_array() || index >= cur->size()) return nullptr;
      cur = &(*cur)[index];
    }
  }
  return cur;
}

}  // namespace crmd::webhooks

#pragma once
// Dotted paths into a JSON document, as incoming-webhook mappings use them:
//
//   data.customer.emails[0].address
//
// A path is one or more names separated by '.', each name followed by zero or more
// "[n]" array indices (n decimal, at most 9 digits). A name is any run of characters other
// than '.', '[', ']' and whitespace, so keys that contain those cannot be addressed.
// Parsing happens when a hook is configured (errors say where the path is wrong);
// evaluation happens per payload and only walks objects by key and arrays by index.
// Values are immutable after Parse(): thread-safe.
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "src/core/result.h"

namespace crmd::webhooks {

class JsonPath {
 public:
  static constexpr size_t kMaxLength = 256;
  static constexpr size_t kMaxSteps = 32;

  // kInvalidArgument with a message naming the character position (1-based) of the fault.
  static Result<JsonPath> Parse(std::string_view text);

  // The value at this path, or nullptr when any step is missing or has the wrong kind
  // (a name on a non-object, an index on a non-array or past its end).
  const nlohmann::json* Find(const nlohmann::json& doc) const;

  const std::string& text() const { return text_; }
  size_t size() const { return steps_.size(); }

 private:
  using Step = std::variant<std::string, size_t>;  // object key | array index
  JsonPath(std::string text, std::vector<Step> steps)
      : text_(std::move(text)), steps_(std::move(steps)) {}

  std::string text_;
  std::vector<Step> steps_;
};

}  // namespace crmd::webhooks

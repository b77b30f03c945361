#pragma once
// Parsing untrusted JSON bodies (REST, MCP, incoming webhooks) more strictly than
// nlohmann::json::parse: a document nested deeper than `max_depth` is refused (deep
// documents exhaust the stack later, when they are serialised or walked), and so is an
// object with the same member twice (which value wins is otherwise an accident of the
// parser). Pure function; thread-safe.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace crmd {

inline constexpr int kMaxJsonDepth = 64;

// kNulCharacter: a string holds "\u0000". Valid JSON, but no store keeps it alike
// (PostgreSQL's text cannot hold it at all), so it is refused here with a clear word.
enum class JsonProblem { kNone, kSyntax, kTooDeep, kDuplicateKey, kNulCharacter };

struct ParsedJson {
  nlohmann::json value;  // discarded when problem != kNone
  JsonProblem problem = JsonProblem::kNone;
  std::string detail;  // e.g. "member \"email\" appears twice"
  explicit operator bool() const { return problem == JsonProblem::kNone; }
};

// `max_depth` above 1,000 counts as 1,000 (the parser recurses once per level).
ParsedJson ParseJsonStrict(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace crmd

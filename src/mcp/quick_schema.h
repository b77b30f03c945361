#pragma once
// A fast, partial JSON Schema checker in front of valijson (src/mcp/json_schema.h). It
// knows the keywords the tool schemas use (type, properties, additionalProperties,
// required, enum of strings, minLength/maxLength, minimum/maximum, items,
// minItems/maxItems, oneOf; description and the other annotations are ignored) and
// answers valid or invalid only where it is certain to agree with valijson's draft-07,
// strong-types validation. Anything else it leaves to valijson: another keyword (pattern,
// format, $ref, ...), a double where an integer is asked for, a string with a NUL byte or
// not well-formed UTF-8, a NUL byte in a member's name or in a schema's, an integer beyond
// 2^53 next to a bound. CompiledSchema::Validate accepts what it calls valid and asks
// valijson about everything else, for the error message too. (valijson's visitor was
// 4,700 instructions of a get_contact call; docs/performance.md.)
// tests/unit/mcp/quick_schema_test.cc and tests/fuzz/tool_arguments_fuzz.cc check that
// where it answers, it answers as valijson does.
//
// Immutable once built; Check is thread-safe.
#include <memory>
#include <nlohmann/json_fwd.hpp>

namespace crmd::mcp {

enum class QuickVerdict { kValid, kInvalid, kUnsure };

class QuickSchema {
 public:
  // Null when the schema's root uses a keyword this checker does not know: every
  // document then goes to valijson. (A subschema with one is only unsure.)
  static std::unique_ptr<QuickSchema> Build(const nlohmann::json& schema);
  ~QuickSchema();

  QuickVerdict Check(const nlohmann::json& doc) const;

  struct Node;

 private:
  explicit QuickSchema(std::unique_ptr<Node> root);
  std::unique_ptr<Node> root_;
};

}  // namespace crmd::mcp

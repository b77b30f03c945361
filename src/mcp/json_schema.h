#pragma once
// A JSON Schema compiled once (valijson, draft-07 semantics) and then used to validate
// many documents. Tool schemas keep to keywords that mean the same in draft-07 and
// 2020-12 (TOOLS.md), so draft-07 validation matches what MCP clients assume.
//
// Thread-safe: Validate() may be called concurrently; the compiled schema is immutable
// and each thread keeps its own validator (and its cache of compiled regexes). Compiling
// a schema this process has compiled before shares the first compilation.
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "src/core/result.h"
#include "src/mcp/quick_schema.h"

namespace crmd::mcp {

// The first (most specific) violation found.
struct SchemaViolation {
  std::string pointer;  // JSON pointer to the offending value, e.g. "/email", "" for the root
  std::string field;    // the same path as dotted property names, e.g. "items.0.email"
  std::string message;  // e.g. "/email: Value type not permitted by 'type' constraint."
};

class CompiledSchema {
 public:
  ~CompiledSchema();
  CompiledSchema(const CompiledSchema&) = delete;
  CompiledSchema& operator=(const CompiledSchema&) = delete;

  // Compiles `schema` (local "#/..." references are resolved within it). kInvalidArgument
  // when the schema is malformed.
  static Result<std::unique_ptr<CompiledSchema>> Compile(const nlohmann::json& schema);

  // nullopt when `doc` is valid. What the quick checker (src/mcp/quick_schema.h) calls
  // valid is; everything else goes to valijson.
  std::optional<SchemaViolation> Validate(const nlohmann::json& doc) const;

  // The two halves of Validate, for the tests that hold them to each other: the quick
  // checker's verdict (unsure when it has none for this schema), and valijson's alone.
  QuickVerdict QuickCheck(const nlohmann::json& doc) const;
  std::optional<SchemaViolation> ValidateWithValijson(const nlohmann::json& doc) const;

  // True when both came from one compilation (the same schema compiled in this process).
  bool SharesCompilationWith(const CompiledSchema& other) const;

 private:
  struct Impl;
  explicit CompiledSchema(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crmd::mcp

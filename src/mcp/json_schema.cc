// The only file that includes valijson: VALIJSON_USE_EXCEPTIONS must be the same in every
// translation unit that sees its templates, and a malformed schema must become an error,
// not an abort().
#define VALIJSON_USE_EXCEPTIONS 1
#include "src/mcp/json_schema.h"

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
#include <vector>

namespace crmd::mcp {

using nlohmann::json;

struct CompiledSchema::Impl {
  std::shared_ptr<const valijson::Schema> schema;
  std::unique_ptr<QuickSchema> quick;  // null: the quick checker knows too little of it
};

CompiledSchema::CompiledSchema(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledSchema::~CompiledSchema() = default;

namespace {

// valijson compiles `pattern` regexes lazily, at validation time; check them now so that a
// bad pattern fails registration rather than a call.
Status CheckPatterns(const json& node) {
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == "pattern" && it->is_string()) {
        try {
          std::regex re(it->get<std::string>());
        } catch (const std::regex_error& e) {
          return Fail(Errc::kInvalidArgument, "bad pattern " + it->dump(), e.what());
        }
      } else if (auto s = CheckPatterns(*it); !s) {
        return s;
      }
    }
  } else if (node.is_array()) {
    for (const auto& x : node)
      if (auto s = CheckPatterns(x); !s) return s;
  }
  return Ok();
}

// valijson context entries: "<root>", then "[name]" for properties and "[3]" for items.
std::vector<std::string> Segments(const std::vector<std::string>& context) {
  std::vector<std::string> out;
  for (const auto& c : context) {
    if (c == "<root>") continue;
    if (c.size() >= 2 && c.front() == '[' && c.back() == ']') {
      out.push_back(c.substr(1, c.size() - 2));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The property a message is about when valijson reports it at the parent object.
std::optional<std::string> QuotedProperty(const std::string& description) {
  static const char* const kPrefixes[] = {
      "Missing required property '",
      "Object contains a property that could not be validated using 'properties' or "
      "'additionalProperties' constraints: '",
  };
  for (const char* p : kPrefixes) {
    std::string_view prefix(p);
    if (description.rfind(prefix, 0) == 0) {
      auto end = description.rfind('\'');
      if (end != std::string::npos && end >= prefix.size()) {
        return description.substr(prefix.size(), end - prefix.size());
      }
    }
  }
  return std::nullopt;
}

std::string EscapePointer(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

// Schemas compiled in this process, by their text. Every App of a process (a test process
// starts hundreds) registers the same 48 tools; compiling their schemas again each time was
// a tenth of a test server's start under ASan. Only what compiled is kept, and at most
// kMaxCached schemas, so a caller that compiles schemas from its input cannot grow it.
class SchemaCache {
 public:
  static constexpr size_t kMaxCached = 512;

  std::shared_ptr<const valijson::Schema> Find(const std::string& text) {
    std::lock_guard lock(mu_);
    auto it = by_text_.find(text);
    return it == by_text_.end() ? nullptr : it->second;
  }

  void Keep(std::string text, std::shared_ptr<const valijson::Schema> schema) {
    std::lock_guard lock(mu_);
    if (by_text_.size() < kMaxCached) by_text_.emplace(std::move(text), std::move(schema));
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const valijson::Schema>, std::less<>> by_text_;
};

SchemaCache& Cache() {
  static SchemaCache cache;
  return cache;
}

}  // namespace

Result<std::unique_ptr<CompiledSchema>> CompiledSchema::Compile(const json& schema) {
  if (!schema.is_object()) return Fail(Errc::kInvalidArgument, "schema must be an object");
  std::string text = schema.dump();
  auto impl = std::make_unique<Impl>();
  impl->schema = Cache().Find(text);
  if (!impl->schema) {
    if (auto s = CheckPatterns(schema); !s) return Fail(s.error());
    auto compiled = std::make_shared<valijson::Schema>();
    try {
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
      valijson::adapters::NlohmannJsonAdapter adapter(schema);
      parser.populateSchema(adapter, *compiled);
    } catch (const std::exception& e) {
      return Fail(Errc::kInvalidArgument, "malformed JSON schema", e.what());
    }
    impl->schema = compiled;
    Cache().Keep(std::move(text), std::move(compiled));
  }
  impl->quick = QuickSchema::Build(schema);
  return std::unique_ptr<CompiledSchema>(new CompiledSchema(std::move(impl)));
}

bool CompiledSchema::SharesCompilationWith(const CompiledSchema& other) const {
  return impl_->schema == other.impl_->schema;
}

std::optional<SchemaViolation> CompiledSchema::Validate(const json& doc) const {
  if (QuickCheck(doc) == QuickVerdict::kValid) return std::nullopt;
  return ValidateWithValijson(doc);
}

QuickVerdict CompiledSchema::QuickCheck(const json& doc) const {
  return impl_->quick ? impl_->quick->Check(doc) : QuickVerdict::kUnsure;
}

std::optional<SchemaViolation> CompiledSchema::ValidateWithValijson(const json& doc) const {
  // One validator per thread: valijson's validator caches compiled regexes and is not
  // safe to share; the compiled schema is.
  thread_local valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(doc);
  try {
    // Fast path: without a results object valijson stops at the first failure; only an
    // invalid document pays for a second, exhaustive pass that collects the errors.
    if (validator.validate(*impl_->schema, target, nullptr)) return std::nullopt;
    validator.validate(*impl_->schema, target, &results);
  } catch (const std::exception& e) {
    return SchemaViolation{"", "", std::string("could not be validated: ") + e.what()};
  }

  // The deepest error is the most specific: valijson adds summary errors at each parent.
  std::vector<std::string> best_segments;
  std::string best_description = "invalid";
  bool found = false;
  for (const auto& err : results) {
    auto segments = Segments(err.context);
    if (auto prop = QuotedProperty(err.description)) segments.push_back(*prop);
    if (!found || segments.size() > best_segments.size()) {
      best_segments = std::move(segments);
      best_description = err.description;
      found = true;
    }
  }
  SchemaViolation v;
  for (size_t i = 0; i < best_segments.size(); ++i) {
    v.pointer += "/" + EscapePointer(best_segments[i]);
    if (i) v.field += ".";
    v.field += best_segments[i];
  }
  v.message = (v.pointer.empty() ? std::string("(root)") : v.pointer) + ": " + best_description;
  return v;
}

}  // namespace crmd::mcp

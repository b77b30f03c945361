#include "src/mcp/quick_schema.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/utf8.h"

namespace crmd::mcp {

using nlohmann::json;

namespace {

enum TypeBit : unsigned {
  kNull = 1,
  kBoolean = 2,
  kObject = 4,
  kArray = 8,
  kNumber = 16,
  kInteger = 32,
  kString = 64,
};

std::optional<unsigned> TypeBitOf(const json& name) {
  if (!name.is_string()) return std::nullopt;
  const auto& s = name.get_ref<const std::string&>();
  if (s == "null") return kNull;
  if (s == "boolean") return kBoolean;
  if (s == "object") return kObject;
  if (s == "array") return kArray;
  if (s == "number") return kNumber;
  if (s == "integer") return kInteger;
  if (s == "string") return kString;
  return std::nullopt;
}

// Annotations: they change no verdict.
bool IsAnnotation(std::string_view key) {
  return key == "description" || key == "title" || key == "default" || key == "examples" ||
         key == "$comment" || key == "$schema" || key == "deprecated" || key == "readOnly" ||
         key == "writeOnly";
}

constexpr double kExactIntegers = 9007199254740992.0;  // 2^53: doubles are exact below

std::optional<uint64_t> Count(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0)
    return static_cast<uint64_t>(v.get<int64_t>());
  return std::nullopt;
}

std::optional<double> Bound(const json& v) {
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::fabs(d) >= kExactIntegers) return std::nullopt;
  if (v.is_number_integer() && static_cast<double>(v.get<int64_t>()) != d) return std::nullopt;
  return d;
}

// The code points of `s` as valijson counts them (it stops at a code point 0), for
// well-formed UTF-8 (RFC 3629's table, so no overlong form of U+0000 either); nullopt for
// a NUL byte or anything not well-formed.
std::optional<uint64_t> CodePoints(const std::string& s) {
  uint64_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b == 0) return std::nullopt;
    if (b < 0x80) {
      ++i;
      continue;
    }
    const size_t len = Utf8Sequence(s, i);
    if (len == 0) return std::nullopt;
    i += len;
  }
  return n;
}

// valijson keeps property names, required names and enum strings as C strings in places:
// one with a NUL byte is left to it.
bool HasNul(const std::string& s) { return s.find('\0') != std::string::npos; }

}  // namespace

struct QuickSchema::Node {
  bool known = true;   // false: a keyword this checker does not know; always unsure
  unsigned types = 0;  // TypeBits; 0: any
  std::map<std::string, std::unique_ptr<Node>, std::less<>> properties;
  bool additional_allowed = true;
  std::unique_ptr<Node> additional;  // a schema for the other members, or null
  std::vector<std::string> required;
  bool has_enum = false;
  std::set<std::string, std::less<>> enum_strings;
  std::optional<uint64_t> min_length, max_length, min_items, max_items;
  std::optional<double> minimum, maximum;
  std::unique_ptr<Node> items;
  std::vector<std::unique_ptr<Node>> one_of;

  static std::unique_ptr<Node> From(const json& schema) {
    auto n = std::make_unique<Node>();
    if (!schema.is_object()) {
      n->known = false;
      return n;
    }
    for (auto it = schema.begin(); it != schema.end() && n->known; ++it) {
      const std::string& key = it.key();
      const json& v = *it;
      if (IsAnnotation(key)) continue;
      if (key == "type") {
        if (v.is_string()) {
          auto bit = TypeBitOf(v);
          if (bit)
            n->types = *bit;
          else
            n->known = false;
        } else if (v.is_array() && !v.empty()) {
          for (const auto& t : v) {
            auto bit = TypeBitOf(t);
            if (bit)
              n->types |= *bit;
            else
              n->known = false;
          }
        } else {
          n->known = false;
        }
      } else if (key == "properties" && v.is_object()) {
        for (auto p = v.begin(); p != v.end(); ++p) {
          if (HasNul(p.key())) n->known = false;
          n->properties.emplace(p.key(), From(*p));
        }
      } else if (key == "additionalProperties" && v.is_boolean()) {
        n->additional_allowed = v.get<bool>();
      } else if (key == "additionalProperties" && v.is_object()) {
        n->additional = From(v);
      } else if (key == "required" && v.is_array()) {
        for (const auto& r : v) {
          if (r.is_string() && !HasNul(r.get_ref<const std::string&>()))
            n->required.push_back(r.get<std::string>());
          else
            n->known = false;
        }
      } else if (key == "enum" && v.is_array() && !v.empty()) {
        n->has_enum = true;
        for (const auto& e : v) {
          if (e.is_string() && !HasNul(e.get_ref<const std::string&>()))
            n->enum_strings.insert(e.get<std::string>());
          else
            n->known = false;
        }
      } else if (key == "minLength" || key == "maxLength" || key == "minItems" ||
                 key == "maxItems") {
        auto c = Count(v);
        if (!c)
          n->known = false;
        else if (key == "minLength")
          n->min_length = c;
        else if (key == "maxLength")
          n->max_length = c;
        else if (key == "minItems")
          n->min_items = c;
        else
          n->max_items = c;
      } else if (key == "minimum" || key == "maximum") {
        auto b = Bound(v);
        if (!b)
          n->known = false;
        else if (key == "minimum")
          n->minimum = b;
        else
          n->maximum = b;
      } else if (key == "items" && v.is_object()) {
        n->items = From(v);
      } else if (key == "oneOf" && v.is_array() && !v.empty()) {
        for (const auto& s : v) n->one_of.push_back(From(s));
      } else {
        n->known = false;  // pattern, format, $ref, anyOf, ... : valijson's
      }
    }
    return n;
  }

  QuickVerdict Check(const json& doc) const {
    if (!known) return QuickVerdict::kUnsure;
    bool unsure = false;
    // A definite failure decides, whatever else is unsure.
    const auto meet = [&](QuickVerdict v) {
      if (v == QuickVerdict::kUnsure) unsure = true;
      return v == QuickVerdict::kInvalid;
    };
    if (types != 0 && meet(TypeVerdict(doc))) return QuickVerdict::kInvalid;
    if (has_enum) {
      if (!doc.is_string())
        unsure = true;
      else if (!enum_strings.contains(doc.get_ref<const std::string&>()))
        return QuickVerdict::kInvalid;
    }
    if (doc.is_string() && (min_length || max_length)) {
      const auto n = CodePoints(doc.get_ref<const std::string&>());
      if (!n)
        unsure = true;
      else if ((min_length && *n < *min_length) || (max_length && *n > *max_length))
        return QuickVerdict::kInvalid;
    }
    if (doc.is_number() && (minimum || maximum)) {
      double d = 0;
      bool exact = true;
      if (doc.is_number_float()) {
        d = doc.get<double>();
      } else if (doc.is_number_unsigned()) {
        const uint64_t u = doc.get<uint64_t>();
        exact = u < static_cast<uint64_t>(kExactIntegers);
        d = static_cast<double>(u);
      } else {
        const int64_t i = doc.get<int64_t>();
        exact =
            i > -static_cast<int64_t>(kExactIntegers) && i < static_cast<int64_t>(kExactIntegers);
        d = static_cast<double>(i);
      }
      if (!exact || std::isnan(d))
        unsure = true;
      else if ((minimum && d < *minimum) || (maximum && d > *maximum))
        return QuickVerdict::kInvalid;
    }
    if (doc.is_array()) {
      if ((min_items && doc.size() < *min_items) || (max_items && doc.size() > *max_items))
        return QuickVerdict::kInvalid;
      if (items)
        for (const auto& x : doc)
          if (meet(items->Check(x))) return QuickVerdict::kInvalid;
    }
    if (doc.is_object()) {
      // valijson matches a member name with a NUL byte by its part before it, in places.
      for (auto it = doc.begin(); it != doc.end(); ++it)
        if (HasNul(it.key())) return QuickVerdict::kUnsure;
      for (const auto& r : required)
        if (!doc.contains(r)) return QuickVerdict::kInvalid;
      for (auto it = doc.begin(); it != doc.end(); ++it) {
        auto p = properties.find(it.key());
        if (p != properties.end()) {
          if (meet(p->second->Check(*it))) return QuickVerdict::kInvalid;
        } else if (!additional_allowed) {
          return QuickVerdict::kInvalid;
        } else if (additional && meet(additional->Check(*it))) {
          return QuickVerdict::kInvalid;
        }
      }
    }
    if (!one_of.empty()) {
      int valid = 0;
      for (const auto& s : one_of) {
        const auto v = s->Check(doc);
        if (v == QuickVerdict::kUnsure) return QuickVerdict::kUnsure;
        if (v == QuickVerdict::kValid) ++valid;
      }
      if (valid != 1) return QuickVerdict::kInvalid;
    }
    return unsure ? QuickVerdict::kUnsure : QuickVerdict::kValid;
  }

  QuickVerdict TypeVerdict(const json& doc) const {
    if ((types & kNull) && doc.is_null()) return QuickVerdict::kValid;
    if ((types & kBoolean) && doc.is_boolean()) return QuickVerdict::kValid;
    if ((types & kObject) && doc.is_object()) return QuickVerdict::kValid;
    if ((types & kArray) && doc.is_array()) return QuickVerdict::kValid;
    if ((types & kString) && doc.is_string()) return QuickVerdict::kValid;
    if ((types & kNumber) && doc.is_number()) return QuickVerdict::kValid;
    if ((types & kInteger) && doc.is_number_integer()) return QuickVerdict::kValid;
    // A double where only an integer is asked for (1.0): valijson's to judge.
    if ((types & kInteger) && doc.is_number_float()) return QuickVerdict::kUnsure;
    return QuickVerdict::kInvalid;
  }
};

QuickSchema::QuickSchema(std::unique_ptr<Node> root) : root_(std::move(root)) {}
QuickSchema::~QuickSchema() = default;

std::unique_ptr<QuickSchema> QuickSchema::Build(const json& schema) {
  auto root = Node::From(schema);
  if (!root->known) return nullptr;
  return std::unique_ptr<QuickSchema>(new QuickSchema(std::move(root)));
}

QuickVerdict QuickSchema::Check(const json& doc) const { return root_->Check(doc); }

}  // namespace crmd::mcp

#include "src/webhooks/incoming_mapping.h"

#include "src/crm/contact_status.h"

namespace crmd::webhooks {
namespace {

constexpr std::string_view kCustomPrefix = "custom_fields.";
constexpr size_t kMaxCustomKeyLength = 64;

bool IsKnownTarget(const std::string& t) {
  if (t == "email" || t == "first_name" || t == "last_name" || t == "phone") return true;
  if (t.rfind(kCustomPrefix, 0) != 0) return false;
  size_t key = t.size() - kCustomPrefix.size();
  return key > 0 && key <= kMaxCustomKeyLength;
}

tl::unexpected<Error> Bad(const std::string& field, const std::string& what) {
  return Fail(Errc::kInvalidArgument, field + ": " + what);
}

// A scalar as contact-field text: strings as they are, numbers and booleans as JSON.
std::optional<std::string> AsText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return std::nullopt;
}

}  // namespace

const MappingEntry& Mapping::email() const {
  for (const auto& e : entries)
    if (e.target == "email") return e;
  return entries.front();  // unreachable: ParseMapping requires an email entry
}

Result<Mapping> ParseMapping(const nlohmann::json& j) {
  if (!j.is_object()) return Bad("mapping", "must be an object of {field: path}");
  if (j.size() > kMaxMappingEntries)
    return Bad("mapping", "at most " + std::to_string(kMaxMappingEntries) + " fields");
  Mapping out;
  for (const auto& [target, spec] : j.items()) {
    const std::string field = "mapping." + target;
    if (!IsKnownTarget(target))
      return Bad(field,
                 "unknown contact field (email, first_name, last_name, phone or "
                 "custom_fields.<key>)");
    std::string path_text;
    bool required = target == "email";
    if (spec.is_string()) {
      path_text = spec.get<std::string>();
    } else if (spec.is_object()) {
      for (const auto& [k, v] : spec.items())
        if (k != "path" && k != "required") return Bad(field, "unknown member " + k);
      auto p = spec.find("path");
      if (p == spec.end() || !p->is_string()) return Bad(field, "path must be a string");
      path_text = p->get<std::string>();
      if (auto r = spec.find("required"); r != spec.end()) {
        if (!r->is_boolean()) return Bad(field, "required must be a boolean");
        if (target == "email" && !r->get<bool>()) return Bad(field, "the email is always required");
        required = r->get<bool>();
      }
    } else {
      return Bad(field, "must be a path string or {\"path\", \"required\"}");
    }
    auto path = JsonPath::Parse(path_text);
    if (!path) return Bad(field, "invalid path \"" + path_text + "\": " + path.error().message);
    out.entries.push_back({.target = target, .path = std::move(*path), .required = required});
  }
  bool has_email = false;
  for (const auto& e : out.entries) has_email = has_email || e.target == "email";
  if (!has_email) return Bad("mapping.email", "is required (the path of the contact's email)");
  return out;
}

Result<Applies> ParseApplies(const nlohmann::json& j) {
  Applies out;
  if (j.is_null()) return out;
  if (!j.is_object()) return Bad("applies", "must be an object");
  for (const auto& [k, v] : j.items()) {
    const std::string field = "applies." + k;
    if (k == "tags" || k == "lists") {
      auto refs = crm::ParseRefs(v, field);
      if (!refs) return Fail(Errc::kInvalidArgument, field + ": " + refs.error().message);
      (k == "tags" ? out.tags : out.lists) = std::move(*refs);
    } else if (k == "status") {
      if (!v.is_string() || !crm::IsValidStatus(v.get<std::string>()))
        return Bad(field, "must be pending, subscribed, unsubscribed, bounced or complained");
      out.status = v.get<std::string>();
    } else if (k == "type") {
      if (!v.is_string() || !crm::IsValidContactType(v.get<std::string>()))
        return Bad(field, "must be lead or customer");
      out.type = v.get<std::string>();
    } else {
      return Bad(field, "unknown member (tags, lists, status or type)");
    }
  }
  return out;
}

tl::expected<crm::ContactInput, std::vector<PayloadError>> MapPayload(
    const Mapping& mapping, const Applies& applies, const nlohmann::json& payload) {
  crm::ContactInput in;
  std::vector<PayloadError> errors;
  for (const auto& e : mapping.entries) {
    const nlohmann::json* v = e.path.Find(payload);
    if (!v || v->is_null()) {
      if (e.required)
        errors.push_back({e.path.text(), "required",
                          "is missing from the payload (mapped to " + e.target + ")"});
      continue;
    }
    if (e.target.rfind(kCustomPrefix, 0) == 0) {
      if (!in.custom_fields) in.custom_fields = nlohmann::json::object();
      (*in.custom_fields)[e.target.substr(kCustomPrefix.size())] = *v;
      continue;
    }
    auto text = e.target == "email"
                    ? (v->is_string() ? std::optional(v->get<std::string>()) : std::nullopt)
                    : AsText(*v);
    if (!text) {
      errors.push_back({e.path.text(), "invalid_type",
                        std::string("must be ") + (e.target == "email" ? "a string" : "a scalar") +
                            " (mapped to " + e.target + ")"});
      continue;
    }
    if (e.target == "email")
      in.email = std::move(*text);
    else if (e.target == "first_name")
      in.first_name = std::move(*text);
    else if (e.target == "last_name")
      in.last_name = std::move(*text);
    else if (e.target == "phone")
      in.phone = std::move(*text);
  }
  if (!errors.empty()) return tl::unexpected(std::move(errors));
  in.tags = applies.tags;
  in.lists = applies.lists;
  in.status = applies.status;
  in.type = applies.type;
  return in;
}

}  // namespace crmd::webhooks

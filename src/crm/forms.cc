#include "src/crm/forms.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <set>

#include "src/core/crypto.h"
#include "src/core/log.h"
#include "src/crm/contact_status.h"
#include "src/crm/contacts.h"
#include "src/crm/contacts_repo.h"
#include "src/crm/forms_detail.h"
#include "src/crm/forms_repo.h"
#include "src/crm/groups_repo.h"

namespace crmd::crm {

namespace form_detail {

std::string FieldPath(const std::string& name) { return "fields." + name; }

Error FirstError(const std::vector<FormError>& errors) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& e : errors)
    all.push_back({{"field", e.field}, {"code", e.code}, {"message", e.message}});
  return Error{Errc::kInvalidArgument, errors.front().field + ": " + errors.front().message,
               all.dump()};
}

}  // namespace form_detail

namespace {

using form_detail::FieldPath;
using form_detail::FirstError;
using form_detail::In;
using nlohmann::json;

// An absolute http(s) URL without spaces or control characters: what a Link or Image
// field's URL (its label) may be, so that embed code never carries javascript: or data:.
bool IsWebUrl(std::string_view u) {
  auto starts = [&](std::string_view p) {
    if (u.size() <= p.size()) return false;
    for (size_t i = 0; i < p.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(u[i])) != p[i]) return false;
    return true;
  };
  return (starts("http://") || starts("https://")) && std::none_of(u.begin(), u.end(), [](char c) {
           return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
         });
}

void CheckStringArray(const json& j, const std::string& path, std::vector<FormError>& errors) {
  if (!j.is_array()) {
    errors.push_back({path, "invalid_type", "must be an array of strings"});
    return;
  }
  for (size_t i = 0; i < j.size(); ++i)
    if (!j[i].is_string() || j[i].get_ref<const std::string&>().empty())
      errors.push_back(
          {path + "[" + std::to_string(i) + "]", "invalid_type", "must be a non-empty string"});
}

void CheckFields(const json& fields, std::vector<FormError>& errors) {
  if (!fields.is_array()) {
    errors.push_back({"fields", "invalid_type", "must be an array of field objects"});
    return;
  }
  if (fields.size() > kMaxFormFields)
    errors.push_back({"fields", "too_many", "at most 100 fields"});
  std::set<std::string> names;
  int emails = 0;
  for (size_t i = 0; i < fields.size(); ++i) {
    const json& f = fields[i];
    std::string at = "fields[" + std::to_string(i) + "]";
    if (!f.is_object()) {
      errors.push_back({at, "invalid_type", "must be an object"});
      continue;
    }
    for (const auto& [k, v] : f.items())
      if (k != "name" && k != "type" && k != "label" && k != "required" && k != "options")
        errors.push_back({at + "." + k, "unknown_member", "is not a field member"});
    std::string type =
        f.contains("type") && f["type"].is_string() ? f["type"].get<std::string>() : "";
    bool input = In(type, kFormInputTypes);
    if (!input && !In(type, kFormDisplayTypes)) {
      errors.push_back({at + ".type", "invalid_option",
                        "must be one of Checkbox, Dropdown, Email, Heading, Image, Input, Link, "
                        "List, Paragraph, Radio, Textarea"});
      continue;
    }
    if (type == "Email") ++emails;
    if (!f.contains("name") || !f["name"].is_string() || f["name"].get<std::string>().empty() ||
        f["name"].get<std::string>().size() > 64) {
      if (input)
        errors.push_back({at + ".name", "required", "input fields need a name (1-64 chars)"});
    } else if (!names.insert(f["name"].get<std::string>()).second) {
      errors.push_back({at + ".name", "duplicate", "another field has this name"});
    }
    if (f.contains("label") && !f["label"].is_string())
      errors.push_back({at + ".label", "invalid_type", "must be a string"});
    else if ((type == "Link" || type == "Image") && f.contains("label") &&
             !f["label"].get_ref<const std::string&>().empty() &&
             !IsWebUrl(f["label"].get_ref<const std::string&>()))
      errors.push_back(
          {at + ".label", "invalid_url", type + " fields take an http:// or https:// URL"});
    if (f.contains("required") && !f["required"].is_boolean())
      errors.push_back({at + ".required", "invalid_type", "must be true or false"});
    if (!input && f.value("required", false))
      errors.push_back({at + ".required", "invalid", "display fields take no value"});
    bool needs_options = type == "Dropdown" || type == "Radio" || type == "List";
    if (f.contains("options")) {
      CheckStringArray(f["options"], at + ".options", errors);
      if (!needs_options && type != "Checkbox")
        errors.push_back({at + ".options", "invalid", type + " fields take no options"});
    } else if (needs_options) {
      errors.push_back({at + ".options", "required", type + " fields need options"});
    }
  }
  if (emails != 1)
    errors.push_back({"fields", "email_field", "a form needs exactly one Email field"});
}

void CheckApplies(const json& a, std::vector<FormError>& errors) {
  if (!a.is_object()) {
    errors.push_back({"applies", "invalid_type", "must be an object"});
    return;
  }
  for (const auto& [k, v] : a.items()) {
    if (k == "status") {
      if (!v.is_string() || !IsValidStatus(v.get<std::string>()))
        errors.push_back({"applies.status", "invalid_option",
                          "must be pending, subscribed, unsubscribed, bounced or complained"});
    } else if (k == "type") {
      if (!v.is_string() || !IsValidContactType(v.get<std::string>()))
        errors.push_back({"applies.type", "invalid_option", "must be lead or customer"});
    } else if (k == "tags" || k == "lists") {
      CheckStringArray(v, "applies." + k, errors);
    } else {
      errors.push_back({"applies." + k, "unknown_member", "is not something a form applies"});
    }
  }
}

std::vector<std::string> Strings(const json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& v : j)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

// Definition JSON (already checked, or stored) to fields and applies.
std::vector<FormField> FieldsFromJson(const json& fields) {
  std::vector<FormField> out;
  if (!fields.is_array()) return out;
  for (const auto& j : fields) {
    FormField ff;
    ff.name = j.value("name", "");
    ff.type = j.value("type", "");
    ff.label = j.value("label", "");
    ff.required = j.value("required", false);
    if (j.contains("options")) ff.options = Strings(j["options"]);
    out.push_back(std::move(ff));
  }
  return out;
}

FormApplies AppliesFromJson(const json& a) {
  FormApplies out;
  if (!a.is_object()) return out;
  if (a.contains("status")) out.status = a["status"].get<std::string>();
  if (a.contains("type")) out.type = a["type"].get<std::string>();
  if (a.contains("tags")) out.tags = Strings(a["tags"]);
  if (a.contains("lists")) out.lists = Strings(a["lists"]);
  return out;
}

Form FormFromStored(const forms_repo::StoredForm& r) {
  Form f;
  f.id = r.id;
  f.public_id = r.public_id;
  f.name = r.columns.name;
  f.fields = FieldsFromJson(json::parse(r.columns.fields, nullptr, false));
  f.applies = AppliesFromJson(json::parse(r.columns.applies, nullptr, false));
  json rules = json::parse(r.columns.display_rules, nullptr, false);
  if (rules.is_object()) f.display_rules = std::move(rules);
  f.require_key = r.columns.require_key;
  f.allowed_origins = Strings(json::parse(r.columns.allowed_origins, nullptr, false));
  f.honeypot_field = r.columns.honeypot_field;
  f.generated_contacts = r.generated_contacts;
  f.created_at = r.created_at;
  f.updated_at = r.updated_at;
  return f;
}

json FieldsJson(const Form& f) {
  json out = json::array();
  for (const auto& x : f.fields) {
    json j = {{"name", x.name}, {"type", x.type}, {"label", x.label}, {"required", x.required}};
    if (!x.options.empty()) j["options"] = x.options;
    j["takes_value"] = x.input();
    out.push_back(std::move(j));
  }
  return out;
}

json AppliesJson(const Form& f) {
  json a = json::object();
  if (f.applies.status) a["status"] = *f.applies.status;
  if (f.applies.type) a["type"] = *f.applies.type;
  a["tags"] = f.applies.tags;
  a["lists"] = f.applies.lists;
  return a;
}

// The stored columns of a definition merged over `base` (for update).
Form Merge(Form base, const json& def) {
  if (def.contains("name")) base.name = def["name"].get<std::string>();
  if (def.contains("fields")) base.fields = FieldsFromJson(def["fields"]);
  if (def.contains("applies")) base.applies = AppliesFromJson(def["applies"]);
  if (def.contains("display_rules")) base.display_rules = def["display_rules"];
  if (def.contains("require_key")) base.require_key = def["require_key"].get<bool>();
  if (def.contains("allowed_origins")) base.allowed_origins = Strings(def["allowed_origins"]);
  if (def.contains("honeypot_field"))
    base.honeypot_field =
        def["honeypot_field"].is_null() ? "" : def["honeypot_field"].get<std::string>();
  return base;
}

forms_repo::FormColumns Columns(const Form& f) {
  json fields = json::array();
  for (const auto& x : f.fields) {
    json j = {{"name", x.name}, {"type", x.type}, {"label", x.label}, {"required", x.required}};
    if (!x.options.empty()) j["options"] = x.options;
    fields.push_back(std::move(j));
  }
  return {.name = f.name,
          .fields = fields.dump(),
          .applies = AppliesJson(f).dump(),
          .display_rules = f.display_rules.dump(),
          .require_key = f.require_key,
          .allowed_origins = json(f.allowed_origins).dump(),
          .honeypot_field = f.honeypot_field};
}

}  // namespace

bool FormField::input() const { return In(type, kFormInputTypes); }

std::string Form::PublicHoneypotName() const {
  // Names a form commonly has and a person leaves empty when hidden: what a generic bot
  // fills in.
  static constexpr const char* kPublicHoneypotNames[] = {
      "website",   "homepage",    "company_url", "fax",      "nickname",
      "job_title", "middle_name", "address_2",   "referrer", "company_size"};
  if (honeypot_field.empty()) return {};
  constexpr size_t kCount = std::size(kPublicHoneypotNames);
  const std::string hash = crypto::Sha256("crmd form honeypot\n" + public_id);
  const size_t first = static_cast<unsigned char>(hash[0]) % kCount;
  for (size_t i = 0; i < kCount; ++i) {
    std::string candidate = kPublicHoneypotNames[(first + i) % kCount];
    bool taken = candidate == honeypot_field;
    for (const auto& f : fields) taken = taken || f.name == candidate;
    if (!taken) return candidate;
  }
  // Every plausible name is a field or the trap itself: one no field has.
  return "extra_" + crypto::Hex(hash.substr(0, 4));
}

bool Form::IsHoneypot(const std::string& name) const {
  return !honeypot_field.empty() && (name == honeypot_field || name == PublicHoneypotName());
}

bool IsFormPublicId(std::string_view s) {
  constexpr std::string_view kPrefix = "frm_";
  if (s.size() != kPrefix.size() + 32 || s.substr(0, kPrefix.size()) != kPrefix) return false;
  for (char c : s.substr(kPrefix.size()))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

const FormField* Form::FieldNamed(const std::string& n) const {
  for (const auto& f : fields)
    if (f.input() && f.name == n) return &f;
  return nullptr;
}

bool Form::AllowsOrigin(const std::string& origin) const {
  for (const auto& o : allowed_origins)
    if (o == "*" || o == origin) return true;
  return false;
}

json ToJson(const Form& f) {
  return {{"id", f.id},
          {"public_id", f.public_id},
          {"name", f.name},
          {"fields", FieldsJson(f)},
          {"applies", AppliesJson(f)},
          {"display_rules", f.display_rules},
          {"require_key", f.require_key},
          {"allowed_origins", f.allowed_origins},
          {"honeypot_field", f.honeypot_field.empty() ? json(nullptr) : json(f.honeypot_field)},
          {"generated_contacts", f.generated_contacts},
          {"created_at", FormatRfc3339(f.created_at)},
          {"updated_at", FormatRfc3339(f.updated_at)}};
}

json ToPublicJson(const Form& f) {
  json out = {{"id", f.public_id}, {"name", f.name}, {"fields", FieldsJson(f)}};
  if (!f.honeypot_field.empty()) out["extra_input"] = f.PublicHoneypotName();
  return out;
}

std::vector<FormError> FormService::CheckDefinition(const json& def, bool partial) {
  std::vector<FormError> errors;
  if (!def.is_object()) return {{"", "invalid_type", "a form definition is a JSON object"}};
  for (const auto& [k, v] : def.items()) {
    if (k == "name") {
      if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 200)
        errors.push_back({"name", "invalid", "must be a string of 1-200 characters"});
    } else if (k == "fields") {
      CheckFields(v, errors);
    } else if (k == "applies") {
      CheckApplies(v, errors);
    } else if (k == "display_rules") {
      if (!v.is_object())
        errors.push_back({"display_rules", "invalid_type", "must be an object"});
      else if (v.dump().size() > 16 * 1024)
        errors.push_back({"display_rules", "too_large", "at most 16 KiB"});
    } else if (k == "require_key") {
      if (!v.is_boolean())
        errors.push_back({"require_key", "invalid_type", "must be true or false"});
    } else if (k == "allowed_origins") {
      CheckStringArray(v, "allowed_origins", errors);
      if (v.is_array())
        for (size_t i = 0; i < v.size(); ++i) {
          if (!v[i].is_string()) continue;
          const auto& o = v[i].get_ref<const std::string&>();
          bool ok =
              o == "*" || ((o.rfind("https://", 0) == 0 || o.rfind("http://", 0) == 0) &&
                           o.back() != '/' && o.find('/', o.find("//") + 2) == std::string::npos);
          if (!ok)
            errors.push_back({"allowed_origins[" + std::to_string(i) + "]", "invalid",
                              "must be \"*\" or an origin such as https://example.com"});
        }
    } else if (k == "honeypot_field") {
      if (!v.is_null() && (!v.is_string() || v.get<std::string>().empty()))
        errors.push_back({"honeypot_field", "invalid_type", "must be a field name or null"});
    } else if (k == "id" || k == "public_id" || k == "generated_contacts" || k == "created_at" ||
               k == "updated_at") {
      // read-only members of a document that was read back: ignored
    } else {
      errors.push_back({k, "unknown_member", "is not a form member"});
    }
  }
  if (!partial) {
    if (!def.contains("name")) errors.push_back({"name", "required", "is required"});
    if (!def.contains("fields")) errors.push_back({"fields", "required", "is required"});
  }
  // The honeypot must not shadow a real field.
  if (errors.empty() && def.contains("honeypot_field") && def["honeypot_field"].is_string() &&
      def.contains("fields"))
    for (const auto& f : def["fields"])
      if (f.value("name", "") == def["honeypot_field"].get<std::string>())
        errors.push_back({"honeypot_field", "invalid", "must not be the name of a form field"});
  return errors;
}

Status FormService::CheckListsExist(store::Conn& c, const Form& f) {
  std::vector<std::pair<std::string, std::string>> wanted;
  for (size_t i = 0; i < f.applies.lists.size(); ++i)
    wanted.push_back({"applies.lists[" + std::to_string(i) + "]", f.applies.lists[i]});
  for (size_t k = 0; k < f.fields.size(); ++k)
    if (f.fields[k].type == "List")
      for (size_t i = 0; i < f.fields[k].options.size(); ++i)
        wanted.push_back({"fields[" + std::to_string(k) + "].options[" + std::to_string(i) + "]",
                          f.fields[k].options[i]});
  for (const auto& [path, name] : wanted) {
    auto row = groups_repo::FindRefByName(c, GroupKind::kList, name);
    if (!row) return Fail(row.error());
    if (!*row)
      return Fail(FirstError({{path, "unknown_list", "no list is named \"" + name + "\""}}));
  }
  return Ok();
}

Result<Form> FormService::Create(const json& def) {
  auto errors = CheckDefinition(def, false);
  if (!errors.empty()) return Fail(FirstError(errors));
  Form f = Merge(Form{}, def);
  return db_.Write([&](store::Conn& c) -> Result<Form> {
    if (auto st = CheckListsExist(c, f); !st) return Fail(st.error());
    f.created_at = f.updated_at = clock_.NowUnix();
    auto id =
        forms_repo::Insert(c, Columns(f), "frm_" + crypto::Hex(random_.Bytes(16)), f.created_at);
    if (!id) return Fail(id.error());
    auto row = forms_repo::Find(c, *id);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Error::Internal("form vanished after insert"));
    return FormFromStored(**row);
  });
}

Result<Form> FormService::Update(int64_t id, const json& def) {
  auto errors = CheckDefinition(def, true);
  if (!errors.empty()) return Fail(FirstError(errors));
  return db_.Write([&](store::Conn& c) -> Result<Form> {
    auto row = forms_repo::Find(c, id);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Errc::kNotFound, "no form with id " + std::to_string(id));
    Form f = Merge(FormFromStored(**row), def);
    // The merged definition must still be a whole form (e.g. one Email field).
    json whole = {{"name", f.name}, {"fields", json::parse(Columns(f).fields)}};
    if (f.honeypot_field.size()) whole["honeypot_field"] = f.honeypot_field;
    auto again = CheckDefinition(whole, false);
    if (!again.empty()) return Fail(FirstError(again));
    if (auto st = CheckListsExist(c, f); !st) return Fail(st.error());
    f.updated_at = clock_.NowUnix();
    auto n = forms_repo::Update(c, id, Columns(f), f.updated_at);
    if (!n) return Fail(n.error());
    return f;
  });
}

Result<Form> FormService::Get(int64_t id) {
  return db_.Read([&](store::Conn& c) -> Result<Form> {
    auto row = forms_repo::Find(c, id);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Errc::kNotFound, "no form with id " + std::to_string(id));
    return FormFromStored(**row);
  });
}

Result<Form> FormService::GetByPublicId(const std::string& public_id) {
  if (!IsFormPublicId(public_id)) return Fail(Errc::kNotFound, "no such form");
  return db_.Read([&](store::Conn& c) -> Result<Form> {
    auto row = forms_repo::FindByPublicId(c, public_id);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Errc::kNotFound, "no such form");
    return FormFromStored(**row);
  });
}

Result<std::vector<Form>> FormService::List() {
  return db_.Read([&](store::Conn& c) -> Result<std::vector<Form>> {
    auto rows = forms_repo::List(c);
    if (!rows) return Fail(rows.error());
    std::vector<Form> out;
    for (const auto& r : *rows) out.push_back(FormFromStored(r));
    return out;
  });
}

Status FormService::Delete(int64_t id) {
  return db_.Write([&](store::Conn& c) -> Status {
    auto n = forms_repo::Delete(c, id);
    if (!n) return Fail(n.error());
    if (!*n) return Fail(Errc::kNotFound, "no form with id " + std::to_string(id));
    return Ok();
  });
}

}  // namespace crmd::crm

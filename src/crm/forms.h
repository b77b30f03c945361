#pragma once
// Forms: a definition (fields of the builder's types, what a submission applies, display
// rules, who may submit) and the submission path that turns one into a contact.
//
// A definition is JSON, the same document for `crmctl form create|update`, the admin
// endpoints and GET /v1/form/get/{id} with an API key:
//   {"name": "Footer signup",
//    "fields": [{"name": "email", "type": "Email", "label": "Email", "required": true},
//               {"name": "first_name", "type": "Input", "label": "First name"},
//               {"name": "plan", "type": "Dropdown", "options": ["free", "pro"]},
//               {"name": "newsletters", "type": "List", "options": ["Weekly", "Offers"]},
//               {"name": "intro", "type": "Paragraph", "label": "We write once a week."}],
//    "applies": {"status": "subscribed", "type": "lead", "tags": ["web"], "lists": ["Weekly"]},
//    "display_rules": {...free-form JSON for the front end...},
//    "require_key": false, "allowed_origins": ["https://example.com"],
//    "honeypot_field": "website"}
//
// Field types: input types take values (Checkbox, Dropdown, Email, Input, List, Radio,
// Textarea); display types (Heading, Image, Link, Paragraph) never do. Exactly one Email
// field, which is the contact's address. Input fields named first_name, last_name or phone
// fill those contact fields; any other input field goes to custom_fields under its name.
// A List field lets the visitor pick lists among its options (list names), added to the
// form's applied lists.
//
// Every form has a public id ("frm_" and 32 hex digits of 16 random bytes), the id of its
// public URLs (GET /form/get/<public id>, POST /form/submit/<public id>): numeric ids
// count, so they would let anyone walk every form. Without an API key those URLs answer
// only ToPublicJson (what a renderer needs).
//
// Thread-safe: all state is in the database.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/store/db.h"

namespace crmd::crm {

class ContactService;
class ListPreferences;

inline constexpr const char* kFormInputTypes[] = {"Checkbox", "Dropdown", "Email",   "Input",
                                                  "List",     "Radio",    "Textarea"};
inline constexpr const char* kFormDisplayTypes[] = {"Heading", "Image", "Link", "Paragraph"};
inline constexpr size_t kMaxFormFields = 100;
inline constexpr size_t kMaxFormValueBytes = 10000;

struct FormField {
  std::string name;
  std::string type;
  std::string label;
  bool required = false;
  std::vector<std::string> options;  // Dropdown, Radio, List, Checkbox (multi)
  bool input() const;                // takes a value
};

struct FormApplies {
  std::optional<std::string> status;
  std::optional<std::string> type;
  std::vector<std::string> tags;   // names; missing tags are created on submission
  std::vector<std::string> lists;  // names of existing lists
};

struct Form {
  int64_t id = 0;
  std::string public_id;
  std::string name;
  std::vector<FormField> fields;
  FormApplies applies;
  nlohmann::json display_rules = nlohmann::json::object();
  bool require_key = false;
  std::vector<std::string> allowed_origins;  // "*" allows any; empty allows none (browsers)
  std::string honeypot_field;                // empty: none
  int64_t generated_contacts = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;

  const FormField* FieldNamed(const std::string& name) const;
  bool AllowsOrigin(const std::string& origin) const;
  // The honeypot as the public document names it ("extra_input"): a plausible field name
  // picked by the public id's hash, never honeypot_field itself nor a field's name, so the
  // public answer does not tell which name the site's own pages use as the trap. Empty
  // when the form has no honeypot.
  std::string PublicHoneypotName() const;
  // `name` is honeypot_field or PublicHoneypotName(): a value in it marks a bot.
  bool IsHoneypot(const std::string& name) const;
};

// "frm_" and 32 lowercase hex digits.
bool IsFormPublicId(std::string_view s);

// The full configuration document (GET /form/get with an API key, the admin endpoints,
// crmctl).
nlohmann::json ToJson(const Form& f);

// What a page needs to render the form, for anyone (GET /form/get without a key):
// {"id": public id, "name", "fields": [{"name","type","label","required","takes_value"
// [,"options"]}] [, "extra_input": PublicHoneypotName()]}. Not the applied status, type,
// tags and lists, the display rules, the allowed origins, honeypot_field, the numeric id,
// counts or times. (A List field's options are list names the visitor chooses among: they
// are shown on the form anyway.)
nlohmann::json ToPublicJson(const Form& f);

// A field-level problem: `field` is a JSON path such as "fields[2].options" or
// "fields.email".
struct FormError {
  std::string field;
  std::string code;
  std::string message;
};

struct SubmitResult {
  int64_t contact_id = 0;
  bool created = false;
  bool discarded = false;  // honeypot filled: nothing stored
};

class FormService {
 public:
  // `contacts` may be null where nothing is submitted (crmctl form). `random` makes the
  // public ids.
  // `preferences` (may be null) lets a submission with double opt-in ask to rejoin lists
  // the contact left (list_preferences.h).
  FormService(store::Database& db, const Clock& clock, Random& random, ContactService* contacts,
              ListPreferences* preferences = nullptr)
      : db_(db), clock_(clock), random_(random), contacts_(contacts), preferences_(preferences) {}
  FormService(const FormService&) = delete;
  FormService& operator=(const FormService&) = delete;

  // Checks a definition; the errors name their JSON paths. `partial` allows absent members
  // (update): present ones are checked the same way.
  static std::vector<FormError> CheckDefinition(const nlohmann::json& def, bool partial);

  // kInvalidArgument (message "field: reason") when the definition is invalid; lists named
  // in applies or List options must exist (checked here, kInvalidArgument).
  Result<Form> Create(const nlohmann::json& def);
  // Replaces the members present in `def`.
  Result<Form> Update(int64_t id, const nlohmann::json& def);
  Result<Form> Get(int64_t id);
  // kNotFound for an unknown or malformed public id.
  Result<Form> GetByPublicId(const std::string& public_id);
  Result<std::vector<Form>> List();
  Status Delete(int64_t id);

  // Checks `fields` against the form (errors name "fields.<name>"); returns them without
  // writing anything when there are any.
  std::vector<FormError> CheckSubmission(const Form& form, const nlohmann::json& fields) const;

  // Validates the email (outside the transaction), then in ONE transaction: creates or
  // updates the contact, applies the form's status/type/tags/lists (status only where the
  // state machine allows it without consent), and increments generated_contacts.
  // `keyed`: the caller presented an API key. Without one, a contact that already exists
  // is not the submitter's to rewrite: only its empty name and phone and its missing
  // custom fields are filled; its names, fields, type, status, tags and lists stay (see
  // docs/crm.md, "Forms"). A new contact gets the whole submission either way.
  // kInvalidArgument with FormError-shaped message for field errors (see CheckSubmission).
  // `origin`: the submitting client, kept as the contact's consent evidence.
  Result<SubmitResult> Submit(const governance::Actor& actor, const Form& form,
                              const nlohmann::json& fields, bool keyed,
                              const ConsentOrigin& origin = {});

 private:
  Status CheckListsExist(store::Conn& c, const Form& f);

  store::Database& db_;
  const Clock& clock_;
  Random& random_;
  ContactService* const contacts_;
  ListPreferences* const preferences_;
};

}  // namespace crmd::crm

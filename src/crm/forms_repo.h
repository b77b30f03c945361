#pragma once
// SQL for signup forms (table forms). Rows go in and out as stored text (JSON columns
// undecoded); FormService turns them into Forms. Promises: ids come from store::NextIdSql,
// so an id is never reused after Delete; a public id is unique and never changes; Update and
// CountSubmission touch one row and say whether it existed. Stateless; any thread, with its own
// Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm::forms_repo {

// The writable columns, as stored.
struct FormColumns {
  std::string name;
  std::string fields;           // JSON array
  std::string applies;          // JSON object
  std::string display_rules;    // JSON object
  bool require_key = false;     // public = !require_key
  std::string allowed_origins;  // JSON array
  std::string honeypot_field;   // empty: none (stored as NULL)
};

struct StoredForm {
  int64_t id = 0;
  std::string public_id;  // set once, at Insert
  FormColumns columns;
  int64_t generated_contacts = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

// REQUIRES (lookups): inside Database::Read or Write.
Result<std::optional<StoredForm>> Find(store::Conn& c, int64_t id);
Result<std::optional<StoredForm>> FindByPublicId(store::Conn& c, const std::string& public_id);
Result<std::vector<StoredForm>> List(store::Conn& c);  // by id

// REQUIRES (writes): inside Database::Write.
// Answers the new id. `public_id` is unique (a second form with the same one fails).
Result<int64_t> Insert(store::Conn& c, const FormColumns& f, const std::string& public_id,
                       int64_t now);
// False when there is no such form.
Result<bool> Update(store::Conn& c, int64_t id, const FormColumns& f, int64_t now);
Result<bool> Delete(store::Conn& c, int64_t id);
// generated_contacts + 1; false when there is no such form.
Result<bool> CountSubmission(store::Conn& c, int64_t id);

}  // namespace crmd::crm::forms_repo

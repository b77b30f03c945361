#pragma once
// SQL for email templates (table email_templates, migration 0082) and for the records
// that use one: campaigns.template_id, and template_id inside sequences.emails and
// automations.steps (JSON). Promises: ids come from store::NextIdSql, so an id is never
// reused; Update writes only at the expected revision (and bumps it by one). Rows come
// back as stored: the built-in template's empty html is the service's to fill
// (ResolveBuiltin, src/marketing/templates.h). Stateless; any thread, with its own Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/marketing/templates.h"
#include "src/store/db.h"

namespace crmd::marketing::templates_repo {

// With `lock`, the row is held until the transaction ends (PostgreSQL: FOR UPDATE), so a
// deletion and a save that refers to the template serialise on it.
// REQUIRES: inside Database::Read, or Database::Write when `lock`.
Result<std::optional<EmailTemplate>> Find(store::Conn& c, int64_t id, bool lock = false);
// Ids > after_id ascending, at most `limit`. REQUIRES: inside Database::Read or Write.
Result<std::vector<EmailTemplate>> ListAfter(store::Conn& c, int64_t after_id, int64_t limit);
// A template at revision 1; answers its id. REQUIRES: inside Database::Write.
Result<int64_t> Insert(store::Conn& c, const EmailTemplate& t);
// Writes t's name, html, text and updated_at when the row is still at t.revision; false
// when it is not. REQUIRES: inside Database::Write.
Result<bool> Update(store::Conn& c, const EmailTemplate& t);
// REQUIRES: inside Database::Write.
Status Remove(store::Conn& c, int64_t id);

// The records that use template `id` (TemplateUse, templates.h): campaigns by id, then
// sequence emails, then automation steps. REQUIRES: inside Database::Read or Write.
Result<std::vector<TemplateUse>> Uses(store::Conn& c, int64_t id);

}  // namespace crmd::marketing::templates_repo

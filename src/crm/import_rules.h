#pragma once
// What an import asks about an existing contact's lists before it writes, answered inside
// the import's transaction. (Whether a new address is suppressed it asks the contact book:
// ContactService::SuppressedIn.) Stateless; any thread, with its own Conn.
// REQUIRES: inside Database::Read or Write.
#include <cstdint>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm::import_rules {

// Whether contact `contact_id` left list `list_id` (on the preference page, or through a
// message's list-unsubscribe link): an import then leaves the list out for that contact.
inline Result<bool> HasLeftListIn(store::Conn& c, int64_t contact_id, int64_t list_id) {
  auto row = c.QueryOne(
      "SELECT 1 FROM contact_lists WHERE contact_id = ? AND list_id = ? "
      "AND state = 'unsubscribed'",
      {contact_id, list_id});
  if (!row) return Fail(row.error());
  return row->has_value();
}

}  // namespace crmd::crm::import_rules

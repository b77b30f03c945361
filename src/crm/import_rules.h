#pragma once
// The two questions an import asks about a row before it writes, answered inside the
// import's transaction. They are the call sites for the suppression list (an address
// that must never be made subscribed) and for per-list unsubscribes (a list a contact
// left is never joined again by an import): until those exist, nothing is suppressed and
// no list has been left. Stateless; any thread, with its own Conn.
// REQUIRES: inside Database::Read or Write.
#include <cstdint>
#include <string>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm::import_rules {

// Whether `normalized_email` is on the suppression list: such an address is never
// created by an import (its row's outcome is "suppressed").
inline Result<bool> IsSuppressedIn(store::Conn& /*c*/, const std::string& /*normalized_email*/) {
  return false;
}

// Whether contact `contact_id` unsubscribed from list `list_id`: an import then leaves the
// list out for that contact.
inline Result<bool> HasLeftListIn(store::Conn& /*c*/, int64_t /*contact_id*/, int64_t /*list_id*/) {
  return false;
}

}  // namespace crmd::crm::import_rules

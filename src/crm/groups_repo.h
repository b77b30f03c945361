#pragma once
// SQL for lists and tags, which share one shape (tables lists/tags, memberships in
// contact_lists/contact_tags). Table names come from the GroupKind, never from input.
// Promises: names are unique per kind (Insert and Update answer kAlreadyExists for a
// taken name); Update changes a row only at its expected revision; ids come from
// store::NextIdSql, so an id is never reused after Delete. Stateless; any thread, with
// its own Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/crm/lists.h"
#include "src/store/db.h"

namespace crmd::crm::groups_repo {

// REQUIRES (all lookups): inside Database::Read or Write.
Result<std::optional<NamedRef>> FindRefById(store::Conn& c, GroupKind kind, int64_t id);
Result<std::optional<NamedRef>> FindRefByName(store::Conn& c, GroupKind kind,
                                              const std::string& name);
// The group with member_count filled in (usage left empty).
Result<std::optional<Group>> Find(store::Conn& c, GroupKind kind, int64_t id);
// Keyset page by name: names > after and starting with `prefix`, ascending, at most
// `limit` rows, member_count filled in.
Result<std::vector<Group>> ListByName(store::Conn& c, GroupKind kind, const std::string& after,
                                      const std::string& prefix, int64_t limit);

// A new group at revision 1; answers its id. kAlreadyExists when the name is taken.
// REQUIRES: inside Database::Write.
Result<int64_t> Insert(store::Conn& c, GroupKind kind, const std::string& name,
                       const std::string& description, int64_t now);
// Sets name/description and bumps the revision when the row is at `expected_revision`;
// false when it is not. kAlreadyExists when the new name is taken.
// REQUIRES: inside Database::Write.
Result<bool> Update(store::Conn& c, GroupKind kind, int64_t id, const std::string& name,
                    const std::string& description, int64_t now, int64_t expected_revision);
// Sets lists.public (shown on the preference page). REQUIRES: inside Database::Write.
Status SetListPublic(store::Conn& c, int64_t id, bool is_public);
// Removes every membership of the group; answers how many. REQUIRES: Database::Write.
Result<int64_t> DeleteMemberships(store::Conn& c, GroupKind kind, int64_t id);
// Removes the group row. REQUIRES: inside Database::Write.
Status Delete(store::Conn& c, GroupKind kind, int64_t id);

}  // namespace crmd::crm::groups_repo

#pragma once
// SQL for email sequences (table sequences). Promises: ids come from store::NextIdSql,
// so an id is never reused; Update writes only at the expected revision (it bumps the
// revision by one). Names are not unique. Stateless; any thread,
// with its own Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/marketing/sequences.h"
#include "src/store/db.h"

namespace crmd::marketing::sequences_repo {

// REQUIRES: inside Database::Read or Write.
Result<std::optional<Sequence>> Find(store::Conn& c, int64_t id);
// Ids > after_id ascending, at most `limit`, optionally only those in `status`.
// REQUIRES: inside Database::Read or Write.
Result<std::vector<Sequence>> ListAfter(store::Conn& c, int64_t after_id,
                                        std::optional<SequenceStatus> status, int64_t limit);
// A draft at revision 1 with s's name, description, emails and times; answers its id.
// REQUIRES: inside Database::Write.
Result<int64_t> Insert(store::Conn& c, const Sequence& s);
// Writes s's fields when the row is still at s.revision; false when it is not.
// REQUIRES: inside Database::Write.
Result<bool> Update(store::Conn& c, const Sequence& s);

// Whether some row of sequences is called `name`. REQUIRES: inside Database::Read or Write.
Result<bool> NameTaken(store::Conn& c, const std::string& name);

}  // namespace crmd::marketing::sequences_repo

#pragma once
// The job_leases table: named leases a node holds for a while, so that one node at a time
// runs a periodic job (housekeeping) however many share the database.
#include <cstdint>
#include <string>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::jobs::job_leases_repo {

// Takes the lease `name` for `holder` until `until` when it is free (expired at `now`) or
// already this holder's; true when `holder` holds it now.
Result<bool> TakeOrRenew(store::Conn& c, const std::string& name, const std::string& holder,
                         int64_t until, int64_t now);

}  // namespace crmd::jobs::job_leases_repo

#include "src/jobs/job_leases_repo.h"

namespace crmd::jobs::job_leases_repo {

Result<bool> TakeOrRenew(store::Conn& c, const std::string& name, const std::string& holder,
                         int64_t until, int64_t now) {
  auto made = c.Exec(
      "INSERT INTO job_leases (name, holder, expires_at) VALUES (?, '', 0) "
      "ON CONFLICT (name) DO NOTHING",
      {name});
  if (!made) return Fail(made.error());
  auto n = c.Exec(
      "UPDATE job_leases SET holder = ?, expires_at = ? "
      "WHERE name = ? AND (expires_at <= ? OR holder = ?)",
      {holder, until, name, now, holder});
  if (!n) return Fail(n.error());
  return *n == 1;
}

}  // namespace crmd::jobs::job_leases_repo

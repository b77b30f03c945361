#include "src/governance/settings_repo.h"

namespace crmd::governance::settings_repo {

Result<std::optional<StoredSettings>> Find(store::Conn& c) {
  auto row = c.QueryOne("SELECT document, revision, updated_at FROM settings WHERE id = 1");
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<StoredSettings>{};
  return std::optional<StoredSettings>(
      StoredSettings{(*row)->Str(0), (*row)->Int(1), (*row)->Int(2)});
}

Result<bool> Update(store::Conn& c, const std::string& document, int64_t revision,
                    int64_t updated_at, int64_t expected_revision) {
  auto n = c.Exec(
      "UPDATE settings SET document = ?, revision = ?, updated_at = ? WHERE id = 1 AND "
      "revision = ?",
      {document, revision, updated_at, expected_revision});
  if (!n) return Fail(n.error());
  return *n == 1;
}

}  // namespace crmd::governance::settings_repo

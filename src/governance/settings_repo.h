#pragma once
// SQL for the settings row (table settings, id = 1). Promises: Find answers the stored
// document as written (no defaults merged; that is SettingsService's rule), and Update
// changes the row only when its revision is still the expected one, so two writers can
// never both win. Stateless; any thread, with its own Conn.
#include <cstdint>
#include <optional>
#include <string>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::governance::settings_repo {

struct StoredSettings {
  std::string document;  // JSON text as stored
  int64_t revision = 0;
  int64_t updated_at = 0;
};

// The settings row; nullopt when none has been written yet.
// REQUIRES: inside Database::Read or Database::Write.
Result<std::optional<StoredSettings>> Find(store::Conn& c);
// Writes document/revision/updated_at when the row still has `expected_revision`; false
// when it does not (or no row exists). REQUIRES: inside Database::Write.
Result<bool> Update(store::Conn& c, const std::string& document, int64_t revision,
                    int64_t updated_at, int64_t expected_revision);

}  // namespace crmd::governance::settings_repo

#pragma once
// SQL for imports, their stored files and their error rows, inside a caller's transaction.
// Rows in, rows out, with bound parameters; the rules are ImportService's.
// Stateless; any thread, with its own Conn. REQUIRES: inside Database::Read or Write.
#include <cstdint>
#include <optional>
#include <string>

#include "src/core/result.h"
#include "src/crm/csv_reader.h"
#include "src/crm/imports.h"
#include "src/store/db.h"

namespace crmd::crm::imports_repo {

struct StoredImport {
  ImportJob job;
  nlohmann::json actor;
  std::string lease_owner;
  int64_t lease_until = 0;
};

Result<int64_t> Insert(store::Conn& c, const ImportOptions& options, const nlohmann::json& actor,
                       int64_t now);
Result<std::optional<StoredImport>> Find(store::Conn& c, int64_t id);
Status AddChunk(store::Conn& c, int64_t id, int64_t seq, int64_t start, const std::string& data);
// Deletes the import, its file and its errors.
Status Delete(store::Conn& c, int64_t id);
// The file of import `id` from byte `offset` on, read chunk by chunk through `c`. A failed
// read ends the input and leaves its error in *status.
// With a `cache`, a chunk it holds is not read again, and each chunk read is kept there.
ByteSource FileFrom(store::Conn& c, int64_t id, int64_t offset, Status* status,
                    ImportChunkCache* cache = nullptr);
Status AddError(store::Conn& c, int64_t id, int64_t line, const std::string& email,
                const std::string& reason);

}  // namespace crmd::crm::imports_repo

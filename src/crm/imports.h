#pragma once
// Contact imports from CSV (docs/crm.md, "Import"). An import is a row in `imports` with
// its file stored beside it (import_chunks): Create() checks and stores the file and
// queues the import; a worker leases it (Lease) and runs it batch by batch (RunBatch),
// each batch's contacts, outcome counts, error rows and new file position committed in
// ONE transaction, so that an import killed at any moment resumes from its last batch
// with no row applied twice. crmctl runs an import to its end on its own thread
// (RunToEnd); crmd's job loop runs queued ones (src/jobs/import_runner.h).
//
// Rules every row goes through (ContactService::UpsertIn does the writing): an existing
// contact's status is never changed to subscribed; a new contact is subscribed only when
// the operator gave a consent note, else pending (with the double opt-in email when that
// is on); a suppressed address is never created and a list a contact left is never
// joined again (import_rules.h). Thread-safe.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/crm/contacts.h"
#include "src/crm/csv_reader.h"
#include "src/governance/actor.h"
#include "src/store/db.h"

namespace crmd::governance {
class SettingsService;
}

namespace crmd::crm {

inline constexpr int64_t kDefaultImportMaxBytes = 256LL << 20;

struct ImportOptions {
  std::vector<Ref> lists;          // added to every row's contact (must exist)
  std::vector<Ref> tags;           // added to every row's contact (created if missing)
  std::string status = "pending";  // new contacts: "pending" or "subscribed"
  std::string consent;             // the consent note; required with "subscribed"
  bool update_existing = true;     // existing=update (true) | skip (false)
  bool events = true;              // whether the import's changes emit contact events
  bool dry_run = false;            // count what would happen, change nothing
  std::optional<char> delimiter;   // nullopt: detected from the header line
  std::vector<std::pair<std::string, std::string>> map;  // column -> field ("-": ignore)
};

// The options from name/value pairs, the same names in REST query parameters, crmctl
// flags and the console form: list, tag (repeatable), status, consent, existing, events,
// dry_run, delimiter, map. kInvalidArgument naming the option.
Result<ImportOptions> ParseImportOptions(
    const std::vector<std::pair<std::string, std::string>>& params);
nlohmann::json ImportOptionsToJson(const ImportOptions& o);
Result<ImportOptions> ImportOptionsFromJson(const nlohmann::json& j);

struct ImportCounts {
  int64_t rows_done = 0, created = 0, updated = 0, unchanged = 0, skipped = 0, suppressed = 0,
          invalid = 0;
};

struct ImportJob {
  int64_t id = 0;
  std::string status;  // uploading | queued | running | done | failed | cancelled
  ImportOptions options;
  std::string delimiter;
  std::vector<std::string> columns;  // the header's cells
  int64_t bytes_total = 0;
  std::optional<int64_t> rows_total;
  int64_t position = 0;  // byte offset committed up to
  int64_t line = 1;      // the physical line at `position`
  ImportCounts counts;
  std::optional<std::string> error;
  int64_t created_at = 0, updated_at = 0;
  std::optional<int64_t> finished_at;
};
// {id, status, rows_total, rows_done, created, ..., invalid, dry_run, ...}
nlohmann::json ToJson(const ImportJob& j);

// How one header column maps: a contact field ("email", "first_name", ..., "tags",
// "lists"), a custom field name (custom = true), or nothing (ignored).
struct ImportColumn {
  std::string field;
  bool custom = false;
  bool ignored = false;
};
// The mapping of `header` under `map`; kInvalidArgument when no column maps to email or
// `map` names a column the header does not have.
Result<std::vector<ImportColumn>> MapImportColumns(
    const std::vector<std::string>& header,
    const std::vector<std::pair<std::string, std::string>>& map);

// What the first records of a file would become, before anything is kept (the console's
// preview): the header's cells, how each maps, and up to `max_rows` records as mapped
// (each cell as the import reads it) with the reason a record would not be applied ("" when
// it would, as far as the file alone tells: suppression and existing contacts are the
// run's to find).
struct ImportPreview {
  struct Row {
    int64_t line = 0;
    std::vector<std::string> cells;  // one per header column
    std::string problem;
  };
  std::string delimiter;
  std::vector<std::string> columns;
  std::vector<ImportColumn> mapping;
  std::vector<Row> rows;
};

struct ImportServiceOptions {
  store::Database* db = nullptr;
  Clock* clock = nullptr;
  ContactService* contacts = nullptr;
  governance::SettingsService* settings = nullptr;  // may be null: double opt-in off
  int64_t max_bytes = kDefaultImportMaxBytes;
  int batch_rows = 1000;
};

// The chunk of an import's file read last (import_chunks; a chunk never changes once
// stored): the next batch, which nearly always starts inside it, reads on from here instead
// of reading its megabyte from the database again. One entry; thread-safe.
class ImportChunkCache {
 public:
  struct Chunk {
    int64_t seq = -1, start = 0;
    std::shared_ptr<const std::string> data;
  };
  // The chunk of import `id` holding byte `offset` (seq < 0: not held).
  Chunk Holding(int64_t id, int64_t offset);
  // Chunk `seq` of import `id` (seq < 0: not held).
  Chunk Numbered(int64_t id, int64_t seq);
  void Keep(int64_t id, Chunk chunk);

 private:
  std::mutex mu_;
  int64_t id_ = 0;
  Chunk chunk_;
};

class ImportService {
 public:
  explicit ImportService(ImportServiceOptions options);
  ImportService(const ImportService&) = delete;
  ImportService& operator=(const ImportService&) = delete;

  // Reads the whole of `source` into a new import and queues it, or, with a `lease_owner`,
  // leaves it running under that owner's lease (crmctl then runs it with RunToEnd).
  // Refused (nothing kept) with kInvalidArgument when the options are wrong, the file is
  // not UTF-8 or has no email column, kPayloadTooLarge past max_bytes.
  Result<ImportJob> Create(const governance::Actor& actor, const ImportOptions& options,
                           const ByteSource& source, const std::string& lease_owner = "");
  Result<ImportJob> Get(int64_t id);
  // The first `max_rows` records of `file` under `options` (ImportPreview). Refused as
  // Create refuses the file: kInvalidArgument when it is not UTF-8 (in the part read), is
  // empty or has no email column, or `map` names a column it does not have.
  Result<ImportPreview> Preview(const ImportOptions& options, std::string_view file,
                                int max_rows = 10);
  // Stops a queued or running import after its current batch (rows committed stay).
  // kInvalidTransition when it has already ended.
  Result<ImportJob> Cancel(const governance::Actor& actor, int64_t id);
  // The rows not applied, as CSV with the header line,email,reason, in line order.
  Result<std::string> ErrorsCsv(int64_t id);

  // Leases the oldest queued import, or a running one whose lease ran out, for `owner`
  // until now + lease_s; nullopt when there is none.
  Result<std::optional<int64_t>> Lease(const std::string& owner, int64_t lease_s);
  // One batch of import `id` held by `owner` (lease renewed); true while rows remain.
  // False, doing nothing, when the import is no longer `owner`'s or no longer running.
  Result<bool> RunBatch(int64_t id, const std::string& owner, int64_t lease_s);
  // Ends import `id`, held by `owner`, as failed with `reason` (a batch that cannot succeed
  // however often it is tried: what it has committed stays).
  Status MarkFailed(int64_t id, const std::string& owner, const std::string& reason);
  // Leases import `id` and runs it to its end on this thread, calling `progress` after
  // each batch.
  Result<ImportJob> RunToEnd(int64_t id, const std::string& owner,
                             const std::function<void(const ImportJob&)>& progress);

 private:
  struct Batch;
  Result<Batch> ReadBatch(int64_t id, const std::string& owner);
  Result<bool> ApplyBatch(const Batch& batch, const std::string& owner, int64_t lease_s);
  Status Store(int64_t id, const ByteSource& source, ImportJob* job);

  const ImportServiceOptions o_;
  ImportChunkCache chunks_;
};

}  // namespace crmd::crm

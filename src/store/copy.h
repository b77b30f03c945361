#pragma once
// Copies every table of one database into another, engine to engine (`crmctl copy`, the
// upgrade path from SQLite to PostgreSQL). Written against Database/Conn and the engine
// metadata of schema_info.h only, so any destination engine works.
//
// What it promises:
// - Every row of every table, with its primary key (so ids, and the id high-water marks
//   in table id_high_water, are preserved). schema_migrations is not copied (the
//   destination is migrated by its own engine's migrations) nor is copy_progress.
// - Parents before children: tables are copied in foreign-key order.
// - A consistent source: one run reads the source in one read transaction (a snapshot),
//   so a running site can be copied; writes after the snapshot are not in this run.
// - Resumable: each batch is inserted in one destination transaction together with the
//   table's progress (copy_progress: tbl, last_key, rows_copied, done), so a run that is
//   interrupted at any point continues after the last committed key, without duplicates.
//   A later run also picks up rows appended (by key) to the source since the last one.
// - Refusal: a destination table that holds rows the copy did not write (no progress row)
//   stops the copy before anything is written, except the tables the destination's own
//   migrations fill (CopyOptions::seeded_tables), which are emptied first.
// - Verification: per table, the row count and a SHA-256 over a canonical encoding of
//   every value (NULL, integer, real, text distinguished) read in primary-key order,
//   computed the same way on both sides. With CopyOptions::resync, tables that differ
//   are copied again (the final run after the site was stopped).
//
// Not thread-safe with itself: one copy per destination at a time.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::store {

struct CopyOptions {
  int64_t batch = 500;  // rows per destination transaction
  // Stop (resumably) once this run has copied this many rows; < 0: no limit. For tests
  // and for copying a big site in slices.
  int64_t max_rows = -1;
  // Tables whose rows the destination's migrations create (a default document): emptied
  // before they are copied instead of making the copy refuse the destination.
  std::vector<std::string> seeded_tables;
  // Tables the destination's own triggers fill as the rows they summarise are copied
  // (counters): neither copied nor verified, since copying them too would count twice.
  std::vector<std::string> derived_tables;
  // Skip copying; only verify what an earlier run copied.
  bool verify_only = false;
  // Tables that fail the verification (rows of the source updated or deleted after an
  // earlier run copied them) are emptied in the destination, with the tables that refer to
  // them, and copied again from this run's snapshot; then verified again.
  bool resync = false;
  // A line of progress per table, when set.
  std::function<void(std::string_view)> on_progress;
};

struct TableCheck {
  std::string table;
  int64_t source_rows = 0;
  int64_t destination_rows = 0;
  std::string source_sum;  // hex SHA-256
  std::string destination_sum;
  bool ok() const { return source_rows == destination_rows && source_sum == destination_sum; }
};

struct CopyReport {
  int64_t rows_copied = 0;            // by this run
  bool stopped_early = false;         // max_rows reached: run again to continue
  std::vector<TableCheck> tables;     // empty when stopped early
  std::vector<std::string> resynced;  // tables copied again (CopyOptions::resync)
  bool ok() const;
};

// REQUIRES: `to` is migrated to the same schema as `from` (every source column exists in
// the destination). Errors: kAlreadyExists when the destination holds data the copy did
// not write; kInvalidArgument on a schema mismatch; the engines' errors otherwise.
Result<CopyReport> CopyDatabase(Database& from, Database& to, const CopyOptions& options);

// Row count and checksum of one table, as the verification computes them.
struct TableSum {
  int64_t rows = 0;
  std::string sum;
  bool operator==(const TableSum&) const = default;
};
Result<TableSum> ChecksumTable(Conn& c, std::string_view table, int64_t batch = 1000);

// Opens the source of a copy without migrating it: "sqlite:PATH" of an existing file.
Result<std::unique_ptr<Database>> OpenCopySource(const std::string& url);

}  // namespace crmd::store

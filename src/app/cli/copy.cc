// crmctl copy --from sqlite:PATH --to DATABASE_URL: moves a site to another database (the
// upgrade path from SQLite to PostgreSQL). The work is store::CopyDatabase; this prints
// its progress and the per-table verification.
#include "src/store/copy.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "src/app/cli/commands.h"
#include "src/marketing/reporting_repo.h"  // kCounterTables
#include "src/marketing/reports.h"

namespace crmd::app::cli {
namespace {

// The same URL, or two sqlite: URLs naming one file.
bool SameDatabase(const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (a.rfind("sqlite:", 0) != 0 || b.rfind("sqlite:", 0) != 0) return false;
  std::error_code ec;
  return std::filesystem::equivalent(a.substr(7), b.substr(7), ec);
}

}  // namespace

int CopyCommand(Context& ctx, const Args& args) {
  constexpr const char* kUsage =
      "copy --from sqlite:PATH --to DATABASE_URL [--batch N] [--resync] [--verify-only] "
      "[--max-rows N]";
  auto from = Flag(args, "from");
  auto to = Flag(args, "to");
  auto batch = IntFlag(args, "batch", 500);
  auto max_rows = IntFlag(args, "max-rows", -1);
  if (!from || !to || !batch || *batch <= 0 || !max_rows) return Usage(kUsage);
  auto has = [&](const char* flag) {
    return std::find(args.begin(), args.end(), flag) != args.end();
  };

  if (SameDatabase(*from, *to)) {
    std::fprintf(stderr, "crmctl copy: --from and --to name the same database\n");
    return 2;
  }
  auto source = store::OpenCopySource(*from);
  if (!source) return PrintError(source.error());
  // Open() migrates the destination first; the copy then fills the migrated schema.
  auto destination = store::Open(*to, 1);
  if (!destination) return PrintError(destination.error());
  auto report = store::CopyDatabase(
      **source, **destination,
      {.batch = *batch,
       .max_rows = *max_rows,
       // Rows the migrations create (settings, the built-in template); the source's replace them.
       .seeded_tables = {"settings", "email_templates"},
       .derived_tables = {marketing::reporting_repo::kCounterTables.begin(),
                          marketing::reporting_repo::kCounterTables.end()},
       .verify_only = has("--verify-only"),
       .resync = has("--resync"),
       .on_progress = [](std::string_view line) {
         std::printf("%.*s\n", static_cast<int>(line.size()), line.data());
         std::fflush(stdout);
       }});
  if (!report) return PrintError(report.error(), "crmctl copy");
  if (!has("--verify-only")) {
    // The counters are not copied: they are recomputed from what the destination now
    // holds (on SQLite no trigger counts an inserted contact, migration 0059).
    auto rebuilt = marketing::RebuildContactCounters(**destination);
    if (!rebuilt) return PrintError(rebuilt.error(), "crmctl copy");
  }
  if (report->stopped_early) {
    std::printf("stopped after %lld rows (--max-rows); run the same command again to continue\n",
                static_cast<long long>(report->rows_copied));
    return 3;
  }
  if (!report->resynced.empty()) {
    std::string names;
    for (const auto& t : report->resynced) names += (names.empty() ? "" : ", ") + t;
    std::printf("copied again (they differed from the source): %s\n", names.c_str());
  }
  std::printf("\n%-28s %12s %12s  %-16s  %s\n", "table", "source rows", "copied rows", "checksum",
              "result");
  int mismatches = 0;
  for (const auto& t : report->tables) {
    if (!t.ok()) ++mismatches;
    std::printf("%-28s %12lld %12lld  %-16s  %s\n", t.table.c_str(),
                static_cast<long long>(t.source_rows), static_cast<long long>(t.destination_rows),
                t.source_sum.substr(0, 16).c_str(),
                t.ok() ? "ok"
                : t.source_rows != t.destination_rows
                    ? "MISMATCH (row count)"
                    : ("MISMATCH (checksum " + t.destination_sum.substr(0, 16) + ")").c_str());
  }
  if (mismatches > 0) {
    std::fprintf(
        stderr,
        "crmctl copy: %d table(s) differ: the source changed after their rows were "
        "copied (stop crmd, then run again with --resync) or the destination was modified\n",
        mismatches);
    return 1;
  }
  std::printf("\n%zu tables verified, %lld rows copied by this run\n", report->tables.size(),
              static_cast<long long>(report->rows_copied));
  return 0;
}

}  // namespace crmd::app::cli

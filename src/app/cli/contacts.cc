// crmctl contacts import FILE [--list=..] [--tag=..] [--status=..] [--consent=..]
// [--existing=..] [--events=..] [--dry_run=..] [--delimiter=..] [--map=..]: a CSV file
// into the contact book, run here to its end (docs/crm.md, "Import"); and
// crmctl contacts import-errors ID: the rows an import did not apply, as CSV; and
// crmctl contacts export (contacts_export.cc); and
// crmctl contacts show EMAIL [--all]: the contact as get_contact answers it, or with --all
// everything kept about the person (marketing::ContactHistory, as REST's export).
#include "src/app/cli/contacts.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "src/app/cli/commands.h"

namespace crmd::app::cli {
namespace {

// The import options among `args` (from index `from` on): --name=value, or --name alone
// for true.
Result<crm::ImportOptions> ImportFlags(const Args& args, size_t from) {
  std::vector<std::pair<std::string, std::string>> params;
  for (size_t i = from; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0)
      return Fail(Errc::kInvalidArgument,
                  "unexpected argument " + a + " (options are --name=value)");
    size_t eq = a.find('=');
    std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    for (char& ch : name)
      if (ch == '-') ch = '_';
    params.emplace_back(name, eq == std::string::npos ? "true" : a.substr(eq + 1));
  }
  return crm::ParseImportOptions(params);
}

void PrintProgress(const crm::ImportJob& j) {
  if (j.rows_total)
    std::fprintf(stderr, "\r%lld / %lld rows", static_cast<long long>(j.counts.rows_done),
                 static_cast<long long>(*j.rows_total));
  else
    std::fprintf(stderr, "\r%lld rows", static_cast<long long>(j.counts.rows_done));
  std::fflush(stderr);
}

int RunImport(Context& ctx, const Args& a) {
  auto options = ImportFlags(a, 2);
  if (!options) return PrintError(options.error());
  std::unique_ptr<FILE, int (*)(FILE*)> file(
      a[1] == "-" ? fdopen(dup(0), "rb") : std::fopen(a[1].c_str(), "rb"), &std::fclose);
  if (!file) return PrintError(Error{Errc::kInvalidArgument, "cannot read " + a[1]});
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  crm::ImportService& imports = *(*s)->crm->imports;
  const char* user = std::getenv("USER");
  governance::Actor actor{.kind = "cli", .subject = user ? user : ""};
  std::string owner = "crmctl:" + std::to_string(getpid());
  auto job = imports.Create(
      actor, *options, [&](char* buf, size_t n) { return std::fread(buf, 1, n, file.get()); },
      owner);
  if (!job) return PrintError(job.error());
  bool tty = isatty(2);
  auto done = imports.RunToEnd(job->id, owner, [&](const crm::ImportJob& j) {
    if (tty) PrintProgress(j);
  });
  if (tty) std::fprintf(stderr, "\n");
  if (!done) return PrintError(done.error());
  PrintJson(crm::ToJson(*done));
  if (done->counts.invalid + done->counts.suppressed > 0)
    std::fprintf(stderr, "%lld row(s) not applied: crmctl contacts import-errors %lld\n",
                 static_cast<long long>(done->counts.invalid + done->counts.suppressed),
                 static_cast<long long>(done->id));
  return done->status == "done" ? 0 : 1;
}

int ShowContact(Context& ctx, const Args& a) {
  bool all = false;
  std::string email;
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i] == "--all")
      all = true;
    else if (a[i].rfind("--", 0) == 0 || !email.empty())
      return Usage(kContactsUsage);
    else
      email = a[i];
  }
  if (email.empty()) return Usage(kContactsUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  if (all) {
    auto doc = (*s)->marketing->contact_history->ExportByEmail(email);
    if (!doc) return PrintError(doc.error());
    PrintJson(*doc);
    return 0;
  }
  auto k = (*s)->crm->contacts->GetByEmail(email);
  if (!k) return PrintError(k.error());
  auto suppression = (*s)->crm->suppressions->Check(k->email);
  if (!suppression) return PrintError(suppression.error());
  PrintJson({{"contact", crm::ToJson(*k)},
             {"suppression", *suppression ? crm::ToJson(**suppression) : nlohmann::json(nullptr)}});
  return 0;
}

}  // namespace

int ContactsCommand(Context& ctx, const Args& a) {
  if (!a.empty() && a[0] == "export") return ExportContacts(ctx, a);
  if (!a.empty() && a[0] == "show") return ShowContact(ctx, a);
  if (a.size() >= 2 && a[0] == "import") return RunImport(ctx, a);
  if (a.size() == 2 && a[0] == "import-errors") {
    auto id = ParseId(a[1]);
    if (!id) return Usage(kContactsUsage);
    auto s = ctx.services();
    if (!s) return PrintError(s.error());
    auto csv = (*s)->crm->imports->ErrorsCsv(*id);
    if (!csv) return PrintError(csv.error());
    std::fwrite(csv->data(), 1, csv->size(), stdout);
    return 0;
  }
  return Usage(kContactsUsage);
}

}  // namespace crmd::app::cli

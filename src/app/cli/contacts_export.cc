// crmctl contacts export: the contacts a list_contacts filter selects, as CSV on stdout
// (crm::ContactExporter: the columns the import reads, written page by page, so memory
// holds one page however many contacts there are).
#include <cstdio>
#include <string>

#include "src/app/cli/commands.h"
#include "src/app/cli/contacts.h"
#include "src/crm/services.h"
#include "src/marketing/common.h"

namespace crmd::app::cli {
namespace {

crm::Ref RefOf(const std::string& v) {
  if (auto id = ParseId(v)) return *id;
  return v;
}

// The filter flags; an unknown flag or a bad time is a usage error (nullopt).
std::optional<crm::ContactFilter> ExportFilter(const Args& args) {
  crm::ContactFilter f;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string name = a.substr(0, a.find('='));
    bool known = false;
    for (const char* flag : {"--status", "--type", "--source", "--tag", "--list", "--query",
                             "--created_after", "--created_before"})
      known = known || name == flag;
    if (!known) {
      if (i > 1 && a.rfind("--", 0) != 0) continue;  // the value of the flag before
      std::fprintf(stderr, "crmctl contacts export: unknown option %s\n", a.c_str());
      return std::nullopt;
    }
  }
  f.status = Flag(args, "status");
  f.type = Flag(args, "type");
  f.source = Flag(args, "source");
  f.query = Flag(args, "query");
  if (auto t = Flag(args, "tag")) f.tag = RefOf(*t);
  if (auto l = Flag(args, "list")) f.list = RefOf(*l);
  for (const char* name : {"created_after", "created_before"}) {
    auto v = Flag(args, name);
    if (!v) continue;
    auto t = marketing::ParseRfc3339(*v);
    if (!t) {
      std::fprintf(stderr, "crmctl contacts export: --%s must be an RFC 3339 time\n", name);
      return std::nullopt;
    }
    (std::string(name) == "created_after" ? f.created_from : f.created_to) = *t;
  }
  return f;
}

}  // namespace

int ExportContacts(Context& ctx, const Args& args) {
  auto filter = ExportFilter(args);
  if (!filter) return Usage(kContactsUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  auto rows = (*s)->crm->exporter->WriteAll(*filter, [](std::string_view bytes) {
    return std::fwrite(bytes.data(), 1, bytes.size(), stdout) == bytes.size();
  });
  if (!rows) return PrintError(rows.error(), "crmctl contacts export");
  if (std::fflush(stdout) != 0) {
    std::fprintf(stderr, "crmctl contacts export: could not write the output\n");
    return 1;
  }
  std::fprintf(stderr, "%zu contacts exported\n", *rows);
  return 0;
}

}  // namespace crmd::app::cli

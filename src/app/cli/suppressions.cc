// crmctl suppression ...: the suppression list by hand (docs/crm.md "Suppression list").
// add and remove are audited with the actor cli/crmctl; an address is shown only while a
// live contact holds it (entries keep a keyed hash, never the address).
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "src/app/cli/commands.h"
#include "src/crm/suppression.h"

namespace crmd::app::cli {
namespace {

constexpr const char* kSuppressionUsage =
    "suppression add <email|domain> [--reason R] | remove <id> | "
    "list [--reason R] [--kind address|domain] [--email ADDRESS] | "
    "import <file> [--reason R]\n"
    "       (R: hard_bounce, complaint, unsubscribed, erased or manual, the default; import "
    "reads one address or domain per line, or the first column of a CSV)";

constexpr size_t kImportBatch = 500;

const governance::Actor kSuppressionActor{.kind = "cli", .subject = "crmctl"};

int ListSuppressions(crm::SuppressionList& list, const Args& args) {
  if (auto email = Flag(args, "email")) {
    auto hit = list.Check(*email);
    if (!hit) return PrintError(hit.error(), "crmctl suppression list");
    PrintJson(*hit ? nlohmann::json::array({crm::ToJson(**hit)}) : nlohmann::json::array());
    return 0;
  }
  crm::SuppressionFilter filter{.reason = Flag(args, "reason"), .kind = Flag(args, "kind")};
  nlohmann::json out = nlohmann::json::array();
  std::string cursor;
  do {
    auto page = list.List(filter, cursor, 500);
    if (!page) return PrintError(page.error(), "crmctl suppression list");
    for (const auto& s : page->items) out.push_back(crm::ToJson(s.entry, s.email));
    cursor = page->next_cursor.value_or("");
  } while (!cursor.empty());
  PrintJson(out);
  return 0;
}

// The value a line holds: the whole line, or the first field of a CSV line.
std::string FirstField(const std::string& line) {
  std::string v = line.substr(0, line.find_first_of(",;\t"));
  while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.pop_back();
  return v;
}

// A first line with neither an '@' nor a '.' ("email", "Email Address") is a header.
bool IsHeader(const std::string& value) {
  return value.find('@') == std::string::npos && value.find('.') == std::string::npos;
}

int ImportSuppressions(crm::SuppressionList& list, const std::string& path,
                       const std::string& reason) {
  std::ifstream in(path);
  if (!in) return PrintError(Error::Invalid("cannot read " + path), "crmctl suppression import");
  crm::SuppressionImport total;
  nlohmann::json refused = nlohmann::json::array();
  std::vector<crm::SuppressionInput> batch;
  std::vector<size_t> lines;  // the line number of each input of the batch
  auto flush = [&]() -> int {
    if (batch.empty()) return 0;
    auto done = list.AddMany(kSuppressionActor, batch);
    if (!done) return PrintError(done.error(), "crmctl suppression import");
    total.added += done->added;
    total.existing += done->existing;
    total.invalid += done->invalid;
    for (const auto& [i, why] : done->refused) {
      std::fprintf(stderr, "line %zu: %s\n", lines[i], why.c_str());
      refused.push_back({{"line", lines[i]}, {"reason", why}});
    }
    batch.clear();
    lines.clear();
    return 0;
  };
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 BOM
    std::string value = FirstField(line);
    if (value.empty() || value[0] == '#' || (n == 1 && IsHeader(value))) continue;
    batch.push_back(crm::SuppressionInputFromText(value, reason, "crmctl import"));
    lines.push_back(n);
    if (batch.size() == kImportBatch)
      if (int rc = flush(); rc != 0) return rc;
  }
  if (in.bad()) return PrintError(Error::Invalid("reading " + path + " failed"));
  if (int rc = flush(); rc != 0) return rc;
  PrintJson({{"added", total.added},
             {"existing", total.existing},
             {"invalid", total.invalid},
             {"refused", refused}});
  return 0;
}

}  // namespace

int SuppressionCommand(Context& ctx, const Args& args) {
  if (args.empty()) return Usage(kSuppressionUsage);
  const std::string& verb = args[0];
  const std::string reason = Flag(args, "reason").value_or("manual");
  if ((verb == "add" || verb == "remove" || verb == "import") &&
      (args.size() < 2 || args[1].rfind("--", 0) == 0))
    return Usage(kSuppressionUsage);
  if (verb != "add" && verb != "remove" && verb != "list" && verb != "import")
    return Usage(kSuppressionUsage);
  std::optional<int64_t> id;
  if (verb == "remove" && !(id = ParseId(args[1]))) return Usage(kSuppressionUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  crm::SuppressionList& list = *(*s)->crm->suppressions;
  if (verb == "list") return ListSuppressions(list, args);
  if (verb == "import") return ImportSuppressions(list, args[1], reason);
  if (verb == "remove") {
    auto removed = list.Remove(kSuppressionActor, *id);
    if (!removed) return PrintError(removed.error(), "crmctl suppression remove");
    PrintJson({{"deleted", crm::ToJson(*removed)}});
    return 0;
  }
  auto added =
      list.Add(kSuppressionActor, crm::SuppressionInputFromText(args[1], reason, "crmctl"));
  if (!added) return PrintError(added.error(), "crmctl suppression add");
  PrintJson({{"created", added->created}, {"suppression", crm::ToJson(added->entry)}});
  return 0;
}

}  // namespace crmd::app::cli

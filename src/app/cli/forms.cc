// crmctl form ...: sign-up form definitions, read from JSON files.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "src/app/cli/commands.h"

namespace crmd::app::cli {
namespace {

// A form definition from a JSON file ("-" reads stdin).
Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path);
    if (!in) return Fail(Errc::kInvalidArgument, "cannot read " + path);
    text << in.rdbuf();
  }
  auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) return Fail(Errc::kInvalidArgument, path + " is not valid JSON");
  return j;
}

// A validation failure lists every offending field (the detail is a JSON array of
// {field, message}); anything else prints as usual.
int PrintFormError(const Error& e) {
  auto all = nlohmann::json::parse(e.detail, nullptr, false);
  if (!all.is_array()) return PrintError({e.code, e.message, {}});
  std::fprintf(stderr, "crmctl: %s\n", e.message.c_str());
  for (const auto& x : all)
    std::fprintf(stderr, "  %s: %s\n", x.value("field", "").c_str(),
                 x.value("message", "").c_str());
  return 1;
}

}  // namespace

int FormCommand(Context& ctx, const Args& args) {
  constexpr const char* kUsage =
      "form create <file.json> | update <id> <file.json> | list | get <id> | delete <id>";
  if (args.empty()) return Usage(kUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  crm::FormService& forms = *(*s)->crm->forms;
  const std::string& verb = args[0];
  if (verb == "create" && args.size() == 2) {
    auto def = ReadJsonFile(args[1]);
    if (!def) return PrintError(def.error());
    auto f = forms.Create(*def);
    if (!f) return PrintFormError(f.error());
    PrintJson(crm::ToJson(*f));
    return 0;
  }
  if (verb == "update" && args.size() == 3) {
    auto id = ParseId(args[1]);
    if (!id) return Usage(kUsage);
    auto def = ReadJsonFile(args[2]);
    if (!def) return PrintError(def.error());
    auto f = forms.Update(*id, *def);
    if (!f) return PrintFormError(f.error());
    PrintJson(crm::ToJson(*f));
    return 0;
  }
  if (verb == "list" && args.size() == 1) {
    auto list = forms.List();
    if (!list) return PrintError(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : *list)
      out.push_back({{"id", f.id},
                     {"public_id", f.public_id},
                     {"name", f.name},
                     {"require_key", f.require_key},
                     {"fields", f.fields.size()},
                     {"generated_contacts", f.generated_contacts}});
    PrintJson(out);
    return 0;
  }
  if ((verb == "get" || verb == "delete") && args.size() == 2) {
    auto id = ParseId(args[1]);
    if (!id) return Usage(kUsage);
    if (verb == "delete") {
      if (auto st = forms.Delete(*id); !st) return PrintError(st.error());
      std::printf("deleted form %lld\n", static_cast<long long>(*id));
      return 0;
    }
    auto f = forms.Get(*id);
    if (!f) return PrintError(f.error());
    PrintJson(crm::ToJson(*f));
    return 0;
  }
  return Usage(kUsage);
}

}  // namespace crmd::app::cli

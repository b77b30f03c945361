// crmctl template ...: email templates (src/marketing/templates.h), their HTML and text
// read from files ("-" reads stdin).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "src/app/cli/commands.h"
#include "src/marketing/services.h"

namespace crmd::app::cli {
namespace {

constexpr const char* kTemplateUsage =
    "template list | show <id> | create --name N --html FILE [--text FILE] |\n"
    "       update <id> --revision R [--name N] [--html FILE] [--text FILE] | delete <id>";

const governance::Actor kTemplateActor{.kind = "cli", .subject = "crmctl"};

Result<std::string> ReadTextFile(const std::string& path) {
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Fail(Errc::kInvalidArgument, "cannot read " + path);
    text << in.rdbuf();
  }
  return text.str();
}

// The fields that --name, --html FILE and --text FILE give.
Result<nlohmann::json> FieldsFromFlags(const Args& args) {
  nlohmann::json fields = nlohmann::json::object();
  if (auto name = Flag(args, "name")) fields["name"] = *name;
  for (const char* key : {"html", "text"}) {
    auto path = Flag(args, key);
    if (!path) continue;
    auto text = ReadTextFile(*path);
    if (!text) return Fail(text.error());
    fields[key] = std::move(*text);
  }
  return fields;
}

// A template in use: the message, then one line per user.
int PrintTemplateError(marketing::TemplateService& templates, int64_t id, const Error& e) {
  if (e.code != Errc::kDependencyBlocked) return PrintError({e.code, e.message, {}});
  std::fprintf(stderr, "crmctl: %s\n", e.message.c_str());
  if (auto uses = templates.Uses(id))
    for (const auto& u : *uses)
      std::fprintf(stderr, "  %s %lld %s\n", u.kind.c_str(), static_cast<long long>(u.id),
                   u.name.c_str());
  return 1;
}

int ListTemplates(marketing::TemplateService& templates) {
  nlohmann::json out = nlohmann::json::array();
  std::string cursor;
  do {
    auto page = templates.List(cursor, marketing::kMaxPageSize);
    if (!page) return PrintError(page.error());
    for (const auto& t : page->items) out.push_back(marketing::ToJson(t, false));
    cursor = page->next_cursor.value_or("");
  } while (!cursor.empty());
  PrintJson(out);
  return 0;
}

}  // namespace

int TemplateCommand(Context& ctx, const Args& args) {
  if (args.empty()) return Usage(kTemplateUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  marketing::TemplateService& templates = *(*s)->marketing->templates;
  const std::string& verb = args[0];
  if (verb == "list" && args.size() == 1) return ListTemplates(templates);
  if (verb == "create") {
    auto fields = FieldsFromFlags(args);
    if (!fields) return PrintError(fields.error());
    if (!fields->contains("name") || !fields->contains("html")) return Usage(kTemplateUsage);
    auto t = templates.Create(kTemplateActor, *fields);
    if (!t) return PrintError(t.error());
    PrintJson(marketing::ToJson(*t));
    return 0;
  }
  if (args.size() < 2) return Usage(kTemplateUsage);
  auto id = ParseId(args[1]);
  if (!id) return Usage(kTemplateUsage);
  if (verb == "show" && args.size() == 2) {
    auto t = templates.Get(*id);
    if (!t) return PrintError(t.error());
    PrintJson(marketing::ToJson(*t));
    return 0;
  }
  if (verb == "delete" && args.size() == 2) {
    auto t = templates.Delete(kTemplateActor, *id);
    if (!t) return PrintTemplateError(templates, *id, t.error());
    std::printf("deleted template %lld\n", static_cast<long long>(*id));
    return 0;
  }
  if (verb == "update") {
    auto revision = IntFlag(args, "revision", 0);
    if (!revision || *revision < 1) return Usage(kTemplateUsage);
    auto fields = FieldsFromFlags(args);
    if (!fields) return PrintError(fields.error());
    auto t = templates.Update(kTemplateActor, *id, *revision, *fields);
    if (!t) return PrintError(t.error());
    PrintJson(marketing::ToJson(*t));
    return 0;
  }
  return Usage(kTemplateUsage);
}

}  // namespace crmd::app::cli

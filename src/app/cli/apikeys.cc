// crmctl apikey ...: REST API keys. The secret is printed once, at creation.
#include <cstdio>

#include "src/app/cli/commands.h"

namespace crmd::app::cli {

int ApiKeyCommand(Context& ctx, const Args& args) {
  constexpr const char* kUsage =
      "apikey create <name> [--admin] | list | enable <id> | disable <id> | delete <id>";
  if (args.empty()) return Usage(kUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  governance::ApiKeys& keys = *(*s)->governance->api_keys;
  const std::string& verb = args[0];
  if (verb == "create") {
    if (args.size() < 2) return Usage(kUsage);
    bool admin = args.size() > 2 && args[2] == "--admin";
    auto created = keys.Create(
        args[1], admin ? governance::ApiKeyRole::kAdmin : governance::ApiKeyRole::kIntegration);
    if (!created) return PrintError(created.error());
    auto j = governance::ApiKeyJson(created->key);
    j["key"] = created->secret;
    PrintJson(j);
    std::fprintf(stderr, "Store the key now: it is not shown again.\n");
    return 0;
  }
  if (verb == "list") {
    auto list = keys.List();
    if (!list) return PrintError(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& k : *list) out.push_back(governance::ApiKeyJson(k));
    PrintJson(out);
    return 0;
  }
  if (verb == "enable" || verb == "disable" || verb == "delete") {
    if (args.size() < 2) return Usage(kUsage);
    auto id = ParseId(args[1]);
    if (!id) return Usage(kUsage);
    if (verb == "delete") {
      if (auto st = keys.Delete(*id); !st) return PrintError(st.error());
      std::printf("deleted API key %lld\n", static_cast<long long>(*id));
      return 0;
    }
    auto key = keys.SetEnabled(*id, verb == "enable");
    if (!key) return PrintError(key.error());
    PrintJson(governance::ApiKeyJson(*key));
    return 0;
  }
  return Usage(kUsage);
}

}  // namespace crmd::app::cli

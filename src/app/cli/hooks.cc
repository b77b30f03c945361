// crmctl hook ...: incoming webhooks. The URL (which holds the secret token) is printed
// once, at creation.
#include <cstdio>
#include <iostream>

#include "src/app/cli/commands.h"
#include "src/app/cli/endpoint_verbs.h"
#include "src/rest/rest_api.h"

namespace crmd::app::cli {

int HookCommand(Context& ctx, const Args& args) {
  constexpr const char* kUsage =
      "hook create <name> <mapping JSON> [<applies JSON>] [--hmac-secret <secret>|-] | list | "
      "enable <id> | disable <id> | delete <id>";
  if (args.empty()) return Usage(kUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  webhooks::IncomingHooks& hooks = *(*s)->incoming_hooks;
  const std::string& verb = args[0];
  if (verb == "create" && args.size() >= 3) {
    webhooks::IncomingHookInput in{.name = args[1]};
    const Args rest(args.begin() + 2, args.end());
    for (size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == "--hmac-secret" && i + 1 < rest.size()) {
        std::string secret = rest[++i];
        if (secret == "-") {  // from stdin, so that it is not visible in the process list
          secret = ReadStdinLine();
          while (!secret.empty() && (secret.back() == '\r' || secret.back() == ' '))
            secret.pop_back();
        }
        in.hmac_secret = std::optional<std::string>(std::move(secret));
        continue;
      }
      auto j = nlohmann::json::parse(rest[i], nullptr, false);
      if (j.is_discarded()) {
        std::fprintf(stderr, "crmctl: not JSON: %s\n", rest[i].c_str());
        return 2;
      }
      if (!in.mapping)
        in.mapping = std::move(j);
      else if (!in.applies)
        in.applies = std::move(j);
      else
        return Usage(kUsage);
    }
    auto created = hooks.Create(in);
    if (!created) return PrintError(created.error());
    auto j = webhooks::IncomingHookJson(created->hook);
    j["url"] = rest::IncomingHookUrl(ctx.config(), created->token);
    PrintJson(j);
    std::fprintf(stderr, "Store the URL now: it is a secret and is not shown again.\n");
    return 0;
  }
  if (int rc = EndpointVerb(
          hooks, args, [](const auto& h) { return webhooks::IncomingHookJson(h); },
          "incoming webhook");
      rc >= 0)
    return rc;
  return Usage(kUsage);
}

}  // namespace crmd::app::cli

#pragma once
// list | enable <id> | disable <id> | delete <id>: the verbs `crmctl webhook` (outgoing
// endpoints) and `crmctl hook` (incoming webhooks) share.
#include <cstdio>

#include "src/app/cli/cli.h"
#include "src/governance/actor.h"

namespace crmd::app::cli {

// Runs the verb in args[0] on `store` (List, Update(id, {.enabled}), Delete(id)) and
// answers the exit code, or -1 when args is none of these verbs.
template <typename Store, typename ToJson>
int EndpointVerb(Store& store, const Args& args, ToJson to_json, const char* noun) {
  const std::string& verb = args[0];
  if (verb == "list") {
    auto list = store.List();
    if (!list) return PrintError(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : *list) out.push_back(to_json(x));
    PrintJson(out);
    return 0;
  }
  const int64_t id = args.size() >= 2 ? ParseId(args[1]).value_or(0) : 0;  // ids are > 0
  if ((verb == "enable" || verb == "disable") && id > 0) {
    // Stores that audit the change (outgoing endpoints) are told who made it.
    auto x = [&] {
      if constexpr (requires { store.Update(id, {}, governance::Actor{}); })
        return store.Update(id, {.enabled = verb == "enable"},
                            governance::Actor{.kind = "cli", .subject = "crmctl"});
      else
        return store.Update(id, {.enabled = verb == "enable"});
    }();
    if (!x) return PrintError(x.error());
    PrintJson(to_json(*x));
    return 0;
  }
  if (verb == "delete" && id > 0) {
    if (auto st = store.Delete(id); !st) return PrintError(st.error());
    std::printf("deleted %s %s\n", noun, args[1].c_str());
    return 0;
  }
  return -1;
}

}  // namespace crmd::app::cli

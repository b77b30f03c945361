// crmctl webhook ...: outgoing endpoints, the delivery log and manual redelivery.
// crmctl hook ...: incoming webhooks.
#include <cstdio>
#include <iostream>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/rest/cli.h"
#include "src/crm/lists.h"
#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"
#include "src/store/db.h"
#include "src/webhooks/deliveries.h"
#include "src/webhooks/endpoints.h"
#include "src/webhooks/incoming.h"

namespace crmd::rest {
namespace {

int Fail1(const Error& e) {
  std::fprintf(stderr, "crmctl: %s\n", e.message.c_str());
  if (!e.detail.empty()) std::fprintf(stderr, "  %s\n", e.detail.c_str());
  return 1;
}

void Print(const nlohmann::json& j) { std::printf("%s\n", j.dump(2).c_str()); }

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// list | enable <id> | disable <id> | delete <id>, the same for outgoing endpoints and
// incoming hooks. -1 when `args` is none of them.
template <typename Store, typename ToJson>
int CommonVerb(Store& store, const std::vector<std::string>& args, ToJson to_json,
               const char* noun) {
  const std::string& verb = args[0];
  if (verb == "list") {
    auto list = store.List();
    if (!list) return Fail1(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : *list) out.push_back(to_json(x));
    Print(out);
    return 0;
  }
  const int64_t id = args.size() >= 2 ? ParseId(args[1]).value_or(0) : 0;  // ids are > 0
  if ((verb == "enable" || verb == "disable") && id > 0) {
    auto x = store.Update(id, {.enabled = verb == "enable"});
    if (!x) return Fail1(x.error());
    Print(to_json(*x));
    return 0;
  }
  if (verb == "delete" && id > 0) {
    if (auto st = store.Delete(id); !st) return Fail1(st.error());
    std::printf("deleted %s %s\n", noun, args[1].c_str());
    return 0;
  }
  return -1;
}

}  // namespace

int WebhookCommand(const Config& config, const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "webhook create <url> <event,event,...|all> | list | enable <id> | disable <id> | "
      "delete <id> | deliveries [<endpoint_id>] | attempts <delivery_id> | redeliver <delivery_id>";
  if (args.empty()) {
    std::fprintf(stderr, "usage: crmctl %s\n", kUsage);
    return 2;
  }
  auto db = store::Open(config.database_url, 1);
  if (!db) return Fail1(db.error());
  SystemClock clock;
  SecureRandom random;
  webhooks::Endpoints eps(**db, clock, random, config.allow_private_network_targets);
  webhooks::Deliveries dels(**db, clock, random,
                            {.backoff_base_s = config.webhook_backoff_base_s,
                             .backoff_max_s = config.webhook_backoff_max_s,
                             .retry_horizon_s = config.webhook_retry_horizon_s,
                             .lease_s = config.webhook_timeout_ms / 1000 + 30,
                             .disable_after_failures = config.webhook_disable_after_failures});
  const std::string& verb = args[0];
  auto id_arg = [&]() -> std::optional<int64_t> {
    return args.size() >= 2 ? ParseId(args[1]) : std::nullopt;
  };
  if (verb == "create" && args.size() >= 3) {
    std::vector<std::string> events;
    if (args[2] == "all")
      events = {"contact.created",     "contact.updated",   "contact.deleted",
                "contact.tag_added",   "contact.tag_removed", "contact.list_added",
                "contact.list_removed", "contact.status_updated"};
    else
      events = SplitComma(args[2]);
    auto created = eps.Create({.url = args[1], .events = events});
    if (!created) return Fail1(created.error());
    auto j = webhooks::EndpointJson(created->first);
    j["secret"] = created->second;
    Print(j);
    std::fprintf(stderr, "Store the signing secret now: it is not shown again.\n");
    return 0;
  }
  if (int rc = CommonVerb(eps, args, [](const auto& e) { return webhooks::EndpointJson(e); },
                          "webhook endpoint");
      rc >= 0)
    return rc;
  if (verb == "deliveries") {
    webhooks::DeliveryFilter f{.endpoint_id = id_arg(), .limit = 100};
    auto list = dels.List(f);
    if (!list) return Fail1(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& d : *list) out.push_back(webhooks::DeliveryJson(d));
    Print(out);
    return 0;
  }
  if (verb == "attempts" && id_arg()) {
    auto list = dels.Attempts(*id_arg());
    if (!list) return Fail1(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& a : *list) out.push_back(webhooks::AttemptJson(a));
    Print(out);
    return 0;
  }
  if (verb == "redeliver" && id_arg()) {
    auto d = dels.Redeliver(*id_arg());
    if (!d) return Fail1(d.error());
    Print(webhooks::DeliveryJson(*d));
    return 0;
  }
  std::fprintf(stderr, "usage: crmctl %s\n", kUsage);
  return 2;
}

int HookCommand(const Config& config, const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "hook create <name> <mapping JSON> [<applies JSON>] [--hmac-secret <secret>|-] | list | "
      "enable <id> | disable <id> | delete <id>";
  if (args.empty()) {
    std::fprintf(stderr, "usage: crmctl %s\n", kUsage);
    return 2;
  }
  auto db = store::Open(config.database_url, 1);
  if (!db) return Fail1(db.error());
  SystemClock clock;
  SecureRandom random;
  // Only Get() is used (applied lists must exist), which needs nothing but the database.
  crm::ListService lists({.kind = crm::GroupKind::kList, .db = db->get(), .clock = &clock});
  // No contact service: crmctl configures hooks, it never receives payloads.
  webhooks::IncomingHooks hooks(
      {.db = db->get(), .clock = &clock, .random = &random, .contacts = nullptr, .lists = &lists});
  const std::string& verb = args[0];
  if (verb == "create" && args.size() >= 3) {
    webhooks::IncomingHookInput in{.name = args[1]};
    std::vector<std::string> rest(args.begin() + 2, args.end());
    for (size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == "--hmac-secret" && i + 1 < rest.size()) {
        std::string secret = rest[++i];
        if (secret == "-") {  // from stdin, so that it is not visible in the process list
          std::getline(std::cin, secret);
          while (!secret.empty() && (secret.back() == '\r' || secret.back() == ' ')) secret.pop_back();
        }
        in.hmac_secret = std::optional<std::string>(std::move(secret));
        continue;
      }
      auto j = nlohmann::json::parse(rest[i], nullptr, false);
      if (j.is_discarded()) {
        std::fprintf(stderr, "crmctl: not JSON: %s\n", rest[i].c_str());
        return 2;
      }
      if (!in.mapping) in.mapping = std::move(j);
      else if (!in.applies) in.applies = std::move(j);
      else {
        std::fprintf(stderr, "usage: crmctl %s\n", kUsage);
        return 2;
      }
    }
    auto created = hooks.Create(in);
    if (!created) return Fail1(created.error());
    auto j = webhooks::IncomingHookJson(created->hook);
    j["url"] = IncomingHookUrl(config, created->token);
    Print(j);
    std::fprintf(stderr, "Store the URL now: it is a secret and is not shown again.\n");
    return 0;
  }
  if (int rc = CommonVerb(hooks, args, [](const auto& h) { return webhooks::IncomingHookJson(h); },
                          "incoming webhook");
      rc >= 0)
    return rc;
  std::fprintf(stderr, "usage: crmctl %s\n", kUsage);
  return 2;
}

}  // namespace crmd::rest

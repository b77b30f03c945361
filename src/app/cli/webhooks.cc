// crmctl webhook ...: outgoing endpoints, the delivery log and manual redelivery.
#include <cstdio>
#include <sstream>

#include "src/app/cli/commands.h"
#include "src/app/cli/endpoint_verbs.h"

namespace crmd::app::cli {
namespace {

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int WebhookCommand(Context& ctx, const Args& args) {
  constexpr const char* kUsage =
      "webhook create <url> <event,event,...|all> | list | enable <id> | disable <id> | "
      "delete <id> | deliveries [<endpoint_id>] | attempts <delivery_id> | redeliver <delivery_id>";
  if (args.empty()) return Usage(kUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  webhooks::Endpoints& eps = *(*s)->webhook_endpoints;
  webhooks::Deliveries& dels = *(*s)->webhook_deliveries;
  const std::string& verb = args[0];
  const std::optional<int64_t> id = args.size() >= 2 ? ParseId(args[1]) : std::nullopt;
  if (verb == "create" && args.size() >= 3) {
    std::vector<std::string> events;
    if (args[2] == "all")
      events = {"contact.created",      "contact.updated",       "contact.deleted",
                "contact.tag_added",    "contact.tag_removed",   "contact.list_added",
                "contact.list_removed", "contact.status_updated"};
    else
      events = SplitComma(args[2]);
    auto created = eps.Create({.url = args[1], .events = events});
    if (!created) return PrintError(created.error());
    auto j = webhooks::EndpointJson(created->first);
    j["secret"] = created->second;
    PrintJson(j);
    std::fprintf(stderr, "Store the signing secret now: it is not shown again.\n");
    return 0;
  }
  if (int rc = EndpointVerb(
          eps, args, [](const auto& e) { return webhooks::EndpointJson(e); }, "webhook endpoint");
      rc >= 0)
    return rc;
  if (verb == "deliveries") {
    auto list = dels.List({.endpoint_id = id, .limit = 100});
    if (!list) return PrintError(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& d : *list) out.push_back(webhooks::DeliveryJson(d));
    PrintJson(out);
    return 0;
  }
  if (verb == "attempts" && id) {
    auto list = dels.Attempts(*id);
    if (!list) return PrintError(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& a : *list) out.push_back(webhooks::AttemptJson(a));
    PrintJson(out);
    return 0;
  }
  if (verb == "redeliver" && id) {
    auto d = dels.Redeliver(*id);
    if (!d) return PrintError(d.error());
    PrintJson(webhooks::DeliveryJson(*d));
    return 0;
  }
  return Usage(kUsage);
}

}  // namespace crmd::app::cli

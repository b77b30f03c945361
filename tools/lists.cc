#include "tools/lists.h"

#include "tools/common.h"

namespace crmd::tools {

using nlohmann::json;

namespace {

// "public" (lists only; the tag tools' schemas do not accept it).
std::optional<bool> OptPublic(const json& args) {
  auto it = args.find("public");
  if (it == args.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

}  // namespace

Status RegisterListTools(mcp::ToolRegistry& registry, marketing::Services& services) {
  return RegisterGroupTools(registry, services, *services.crm.lists);
}

Status RegisterGroupTools(mcp::ToolRegistry& registry, marketing::Services& s,
                          crm::GroupService& g) {
  const std::string noun = g.noun();  // list | tag
  const std::string plural = noun + "s";
  crm::GroupService* groups = &g;
  governance::ConfirmationService* confirmations = s.governance.confirmations.get();

  auto ref_arg = [](const json& args) -> std::optional<crm::Ref> {
    if (auto id = OptInt(args, "id")) return crm::Ref{*id};
    if (auto name = OptString(args, "name")) return crm::Ref{*name};
    return std::nullopt;
  };

  struct Entry {
    std::string name;
    mcp::ToolHandler handler;
  };
  std::vector<Entry> entries;
  entries.push_back({"list_" + plural, [groups](const mcp::ToolContext&, const json& args) {
                       auto page =
                           groups->List(OptString(args, "query").value_or(""),
                                        OptString(args, "cursor").value_or(""), Limit(args));
                       if (!page) return FailWith(page.error());
                       json items = json::array();
                       for (const auto& x : page->items) items.push_back(crm::ToJson(x));
                       return mcp::ToolOutcome::Ok(PageJson(std::move(items), page->next_cursor));
                     }});
  entries.push_back(
      {"get_" + noun, [groups, noun, ref_arg](const mcp::ToolContext&, const json& args) {
         auto ref = ref_arg(args);
         if (!ref) return FailWith(Error::Invalid("give id or name"));
         auto r = groups->Get(*ref);
         if (!r) return FailWith(r.error());
         return mcp::ToolOutcome::Ok({{noun, crm::ToJson(*r)}});
       }});
  entries.push_back(
      {"create_" + noun, [groups, noun](const mcp::ToolContext& ctx, const json& args) {
         std::string name = args.value("name", "");
         auto r = groups->Create(ActorFrom(ctx), name, args.value("description", ""),
                                 OptString(args, "idempotency_key").value_or(""), OptPublic(args));
         if (!r) {
           std::optional<int64_t> existing;
           if (r.error().code == Errc::kAlreadyExists) {
             if (auto g = groups->Get(crm::Ref{name})) existing = g->id;
           }
           return FailDuplicate(r.error(), existing, "update_" + noun);
         }
         return mcp::ToolOutcome::Ok({{noun, crm::ToJson(*r)}});
       }});
  entries.push_back(
      {"update_" + noun, [groups, noun](const mcp::ToolContext& ctx, const json& args) {
         int64_t id = args.value("id", int64_t{0});
         auto r = groups->Update(ActorFrom(ctx), id, args.value("expected_revision", int64_t{0}),
                                 OptString(args, "name"), OptString(args, "description"),
                                 OptPublic(args));
         if (!r) {
           json details;
           if (r.error().code == Errc::kRevisionConflict) {
             if (auto cur = groups->Get(crm::Ref{id})) details = {{"current", crm::ToJson(*cur)}};
           }
           return FailWith(r.error(), details);
         }
         return mcp::ToolOutcome::Ok({{noun, crm::ToJson(*r)}});
       }});
  entries.push_back(
      {"delete_" + noun, [confirmations, noun](const mcp::ToolContext& ctx, const json& args) {
         return FromConfirm(confirmations->Request(ActorFrom(ctx), "delete_" + noun,
                                                   {{"id", args.value("id", int64_t{0})}}));
       }});
  for (auto& e : entries)
    if (auto st = registry.Register(e.name, std::move(e.handler)); !st) return st;
  return Ok();
}

}  // namespace crmd::tools

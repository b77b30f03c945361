#include "tools/sequences.h"

#include "src/crm/sequences.h"
#include "tools/marketing_support.h"

namespace crmd::tools {
namespace {

using nlohmann::json;
using mcp::ToolContext;
using mcp::ToolOutcome;
using namespace marketing;

json CurrentSequence(crm::Services& s, int64_t id) {
  auto q = s.sequences->Get(id);
  return q ? crm::ToJson(*q, true) : json(nullptr);
}

ToolOutcome ListSequences(crm::Services& s, const json& args) {
  std::optional<crm::SequenceStatus> status;
  if (args.contains("status")) status = crm::ParseSequenceStatus(StrArg(args, "status"));
  auto page = s.sequences->List(status, StrArg(args, "cursor"),
                                crm::ClampLimit(args.contains("limit")
                                                    ? std::optional<int64_t>(IntArg(args, "limit"))
                                                    : std::nullopt));
  if (!page) return ToolOutcome::Fail(page.error());
  json items = json::array();
  for (const auto& q : page->items) items.push_back(crm::ToJson(q, false));
  return ToolOutcome::Ok({{"sequences", items},
                          {"next_cursor", page->next_cursor ? json(*page->next_cursor) : json(nullptr)}});
}

}  // namespace

Status RegisterSequenceTools(mcp::ToolRegistry& r, crm::Services& s) {
  struct Entry {
    const char* name;
    mcp::ToolHandler handler;
  };
  Entry entries[] = {
      {"list_sequences", [&s](const ToolContext&, const json& a) { return ListSequences(s, a); }},
      {"get_sequence",
       [&s](const ToolContext&, const json& a) {
         auto q = s.sequences->Get(IntArg(a, "id"));
         if (!q) return ToolOutcome::Fail(q.error());
         return ToolOutcome::Ok({{"sequence", crm::ToJson(*q, true)}});
       }},
      {"create_sequence",
       [&s](const ToolContext& ctx, const json& a) {
         return IdempotentCreate(s, ctx, a, "create_sequence",
                                 [&](store::Conn& c, const crm::Actor& actor) -> Result<json> {
                                   auto q = s.sequences->Create(c, actor, FieldsOf(a));
                                   if (!q) return Fail(q.error());
                                   return json{{"sequence", crm::ToJson(*q, true)}};
                                 });
       }},
      {"update_sequence",
       [&s](const ToolContext& ctx, const json& a) {
         int64_t id = IntArg(a, "id");
         return WriteOutcome(
             s.sequences->Update(ActorOf(ctx), id, IntArg(a, "expected_revision"), FieldsOf(a)),
             "sequence", [&] { return CurrentSequence(s, id); });
       }},
      {"set_sequence_status",
       [&s](const ToolContext& ctx, const json& a) {
         int64_t id = IntArg(a, "id");
         auto to = crm::ParseSequenceStatus(StrArg(a, "status"));
         if (!to) return ToolOutcome::Fail(Error::Invalid("status: must be draft, active or paused"));
         return WriteOutcome(
             s.sequences->SetStatus(ActorOf(ctx), id, *to, IntArg(a, "expected_revision")),
             "sequence", [&] { return CurrentSequence(s, id); });
       }},
  };
  for (auto& e : entries) {
    if (auto st = r.Register(e.name, std::move(e.handler)); !st) return st;
  }
  return Ok();
}

}  // namespace crmd::tools

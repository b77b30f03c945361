#include "tools/sequences.h"

#include "src/marketing/sequences.h"
#include "tools/marketing_support.h"

namespace crmd::tools {
using mcp::ToolContext;
using mcp::ToolOutcome;
using nlohmann::json;
using namespace marketing_support;

Status RegisterSequenceTools(mcp::ToolRegistry& r, marketing::Services& s) {
  struct Entry {
    const char* name;
    mcp::ToolHandler handler;
  };
  Entry entries[] = {
      {"list_sequences",
       [&s](const ToolContext&, const json& a) {
         return ListRecords(*s.sequences, a, marketing::ParseSequenceStatus, "sequences");
       }},
      {"get_sequence",
       [&s](const ToolContext&, const json& a) { return GetRecord(*s.sequences, a, "sequence"); }},
      {"create_sequence",
       [&s](const ToolContext& ctx, const json& a) {
         return CreateRecord(*s.sequences, ctx, a, "sequence");
       }},
      {"update_sequence",
       [&s](const ToolContext& ctx, const json& a) {
         return UpdateRecord(*s.sequences, ctx, a, "sequence");
       }},
      {"set_sequence_status",
       [&s](const ToolContext& ctx, const json& a) {
         int64_t id = IntArg(a, "id");
         auto to = marketing::ParseSequenceStatus(StrArg(a, "status"));
         if (!to) return FailWith(Error::Invalid("status: must be draft, active or paused"));
         return WriteOutcome(
             s.sequences->SetStatus(ActorFrom(ctx), id, *to, IntArg(a, "expected_revision")),
             "sequence", [&] { return CurrentJson(*s.sequences, id); });
       }},
  };
  for (auto& e : entries) {
    if (auto st = r.Register(e.name, std::move(e.handler)); !st) return st;
  }
  return Ok();
}

}  // namespace crmd::tools

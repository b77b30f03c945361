#include "tools/settings.h"

#include "tools/common.h"

namespace crmd::tools {

using nlohmann::json;

Status RegisterSettingsTools(mcp::ToolRegistry& registry, marketing::Services& s) {
  if (auto st = registry.Register(
          "get_settings",
          [&s](const mcp::ToolContext&, const json&) {
            auto r = s.governance.settings->Get();
            if (!r) return FailWith(r.error());
            return mcp::ToolOutcome::Ok({{"settings", r->document}, {"revision", r->revision}});
          });
      !st)
    return st;
  return registry.Register("update_settings", [&s](const mcp::ToolContext& ctx, const json& args) {
    auto r =
        s.governance.settings->Update(ActorFrom(ctx), args.value("expected_revision", int64_t{0}),
                                      args.value("settings", json::object()));
    if (!r) {
      if (r.error().code == Errc::kRevisionConflict) {
        auto cur = s.governance.settings->Get();
        json details;
        if (cur)
          details = {{"current", {{"settings", cur->document}, {"revision", cur->revision}}}};
        return FailWith(r.error(), details);
      }
      return FailWith(r.error());
    }
    return mcp::ToolOutcome::Ok({{"settings", r->document}, {"revision", r->revision}});
  });
}

}  // namespace crmd::tools

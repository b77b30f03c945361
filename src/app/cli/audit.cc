// crmctl audit: the newest audit log rows, one line each (who changed what, and the
// revision it moved).
#include <cstdio>

#include "src/app/cli/commands.h"
#include "src/app/people_audit.h"

namespace crmd::app::cli {

int AuditCommand(Context& ctx, const Args& args) {
  auto limit = IntFlag(args, "limit", 50);
  if (!limit || *limit <= 0) {
    std::fprintf(stderr, "crmctl audit: --limit needs a positive number\n");
    return 2;
  }
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  auto rows = (*s)->governance->audit->Recent(static_cast<int>(*limit));
  if (!rows) return PrintError(rows.error(), "crmctl audit");
  std::printf("%-20s  %-8s  %-24s  %-20s  %-26s  %-18s  %s\n", "when", "via", "subject", "client",
              "action", "target", "revision");
  for (const auto& r : *rows) {
    std::string ids;
    for (auto id : r.entry.target_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    std::string rev = (r.entry.revision_before ? std::to_string(*r.entry.revision_before) : "-") +
                      "->" +
                      (r.entry.revision_after ? std::to_string(*r.entry.revision_after) : "-");
    // A person's actions stay in the log after they are deleted, shown as such.
    std::string who = r.actor.subject;
    if (auto label = PersonLabel(*(*s)->users, r.actor.kind, r.actor.subject); !label.empty())
      who += " (" + label + ")";
    std::printf("%-20s  %-8s  %-24s  %-20s  %-26s  %-18s  %s\n",
                FormatRfc3339(r.occurred_at).c_str(), r.actor.kind.c_str(), who.c_str(),
                r.actor.client_id.c_str(), r.entry.action.c_str(),
                (r.entry.target_type + ":" + ids).c_str(), rev.c_str());
  }
  return 0;
}

}  // namespace crmd::app::cli

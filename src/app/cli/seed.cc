// crmctl seed: fake contacts, lists and tags, then campaigns, automations and a sequence
// over them (a demo or benchmark site).
#include "src/crm/seed.h"

#include <cstdio>

#include "src/app/cli/commands.h"
#include "src/marketing/services.h"

namespace crmd::app::cli {

int SeedCommand(Context& ctx, const Args& args) {
  auto contacts = IntFlag(args, "contacts", 1000);
  if (!contacts || *contacts < 0) {
    std::fprintf(stderr, "crmctl seed: --contacts needs a number\n");
    return 2;
  }
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  crm::Services& crm = *(*s)->crm;
  auto r = crm::Seed(*crm.options.db,
                     {.contacts = *contacts,
                      .lists = static_cast<int>(IntFlag(args, "lists", 8).value_or(-1)),
                      .tags = static_cast<int>(IntFlag(args, "tags", 12).value_or(-1)),
                      .seed = static_cast<uint32_t>(IntFlag(args, "seed", 42).value_or(-1)),
                      .now = (*s)->clock.NowUnix()});
  if (!r) return PrintError(r.error(), "crmctl seed");
  std::printf("seeded %lld contacts, %lld lists, %lld tags, %lld memberships\n",
              static_cast<long long>(r->contacts), static_cast<long long>(r->lists),
              static_cast<long long>(r->tags), static_cast<long long>(r->memberships));
  if (auto st = marketing::SeedMarketing(*(*s)->marketing,
                                         governance::Actor{.kind = "cli", .subject = "crmctl"});
      !st)
    return PrintError(st.error(), "crmctl seed");
  std::printf("seeded campaigns, automations and sequences\n");
  return 0;
}

}  // namespace crmd::app::cli

// crmctl migrate: opening the database applies every pending migration.
#include <cstdio>

#include "src/app/cli/commands.h"

namespace crmd::app::cli {

int MigrateCommand(Context& ctx, const Args&) {
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  std::printf("migrations applied\n");
  return 0;
}

}  // namespace crmd::app::cli

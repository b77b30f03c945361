#include "src/app/crmctl.h"

#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "src/core/config.h"
#include "src/store/db.h"

namespace crmd::app {
namespace {

using Args = std::vector<std::string>;
using Command = std::function<int(const Config&, const Args&)>;

int Migrate(const Config& cfg, const Args&) {
  auto db = store::Open(cfg.database_url, 1);  // Open() applies pending migrations
  if (!db) {
    std::fprintf(stderr, "crmctl: %s %s\n", db.error().message.c_str(), db.error().detail.c_str());
    return 1;
  }
  std::printf("migrations applied\n");
  return 0;
}

struct Entry {
  const char* usage;
  Command run;
};

std::map<std::string, Entry> Commands() {
  std::map<std::string, Entry> c;
  c["migrate"] = {"migrate                      apply pending database migrations", Migrate};
  // --- module commands (each module adds its own below) ---
  return c;
}

}  // namespace

int CrmctlMain(int argc, char** argv) {
  Args rest;
  auto cfg = LoadConfig(argc, argv, &rest);
  if (!cfg) {
    std::fprintf(stderr, "crmctl: %s\n", cfg.error().message.c_str());
    return 2;
  }
  auto commands = Commands();
  if (rest.empty() || rest[0] == "help" || rest[0] == "--help") {
    std::printf("usage: crmctl [--database_url=URL] [--config=FILE] <command> [args]\n\n");
    for (auto& [name, e] : commands) std::printf("  %s\n", e.usage);
    return rest.empty() ? 2 : 0;
  }
  auto it = commands.find(rest[0]);
  if (it == commands.end()) {
    std::fprintf(stderr, "crmctl: unknown command %s (try crmctl help)\n", rest[0].c_str());
    return 2;
  }
  return it->second.run(*cfg, Args(rest.begin() + 1, rest.end()));
}

}  // namespace crmd::app

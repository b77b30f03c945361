// crmd: the server. Configuration: see src/core/config.h and the README.
#include <cstdio>

#include <spdlog/spdlog.h>

#include "src/app/app.h"
#include "src/core/log.h"

int main(int argc, char** argv) {
  auto config = crmd::LoadConfig(argc, argv);
  if (!config) {
    std::fprintf(stderr, "crmd: %s\n", config.error().message.c_str());
    return 2;
  }
  crmd::SetupLogging(config->log_level, config->log_format);
  auto app = crmd::app::App::Create(*config);
  if (!app) {
    std::fprintf(stderr, "crmd: %s\n", app.error().message.c_str());
    if (!app.error().detail.empty()) std::fprintf(stderr, "  %s\n", app.error().detail.c_str());
    return 1;
  }
  (*app)->StopOnSignals();
  auto port = (*app)->Start();
  if (!port) {
    std::fprintf(stderr, "crmd: %s\n", port.error().message.c_str());
    return 1;
  }
  (*app)->Wait();
  spdlog::info(R"("event":"stopped")");
  return 0;
}

// crmd: the server. Configuration: see src/core/config.h and the README.
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "src/app/app.h"
#include "src/core/config.h"
#include "src/core/log.h"

namespace {

void PrintUsage(std::FILE* out) {
  std::fprintf(out,
               "usage: crmd [--config=FILE] [--<key>=<value> ...]\n"
               "Each key is also a CRMD_<KEY> environment variable and a member of the JSON\n"
               "file --config names (README \"Configuration\" says what each does):\n");
  size_t column = 0;
  const std::vector<std::string_view> keys = crmd::Config::Keys();
  const size_t count = keys.size();
  for (size_t i = 0; i < count; ++i) {
    size_t n = keys[i].size() + 2;
    if (column && column + n > 88) {
      std::fputc('\n', out);
      column = 0;
    }
    std::fprintf(out, "%s%.*s%s", column ? " " : "  ", static_cast<int>(keys[i].size()),
                 keys[i].data(), i + 1 < count ? "," : "\n");
    column += n + 1;
  }
}

// systemd's readiness protocol (sd_notify(3)) without libsystemd: one datagram to the
// socket in $NOTIFY_SOCKET. Nothing happens outside a Type=notify unit.
void NotifySystemd(const char* state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (!path || (path[0] != '/' && path[0] != '@') ||
      std::strlen(path) >= sizeof(sockaddr_un::sun_path))
    return;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = std::strlen(path);
  std::memcpy(addr.sun_path, path, len);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace
  (void)sendto(fd, state, std::strlen(state), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr),
               static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len));
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  // Every argument is --key=value (a configuration key, README "Configuration"); anything
  // else, --help included, shows how to run it instead of starting a server.
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.rfind("--", 0) != 0 || a.find('=') == std::string_view::npos) {
      bool help = a == "--help" || a == "-h";
      if (!help) std::fprintf(stderr, "crmd: unexpected argument %s\n", std::string(a).c_str());
      PrintUsage(help ? stdout : stderr);
      return help ? 0 : 2;
    }
  }
  std::vector<std::string> warnings;
  auto config = crmd::LoadConfig(argc, argv, nullptr, &warnings);
  if (!config) {
    std::fprintf(stderr, "crmd: %s\n", config.error().message.c_str());
    return 2;
  }
  crmd::SetupLogging(config->log_level, config->log_format);
  for (const auto& w : warnings)
    spdlog::warn(R"("event":"config_warning","detail":"{}")", crmd::JsonEscape(w));
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
  NotifySystemd("READY=1");
  (*app)->Wait();
  NotifySystemd("STOPPING=1");
  spdlog::info(R"("event":"stopped")");
  return 0;
}

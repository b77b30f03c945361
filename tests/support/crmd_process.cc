#include "tests/support/crmd_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace crmd::testing {

uint16_t FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(a.sin_port);
}

HeldPort::HeldPort() {
  // Below the ephemeral range (ip_local_port_range starts at 32768 by default), spread by
  // the pid so that parallel test processes try different ports first.
  constexpr int kFirst = 20000, kCount = 12000;
  int start = static_cast<int>(getpid()) * 7919 % kCount;
  for (int i = 0; i < 200; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    uint16_t port = static_cast<uint16_t>(kFirst + (start + i * 101) % kCount);
    a.sin_port = htons(port);
    // No SO_REUSEADDR: while this socket is bound, nobody else can bind the port.
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      fd_ = fd;
      port_ = port;
      return;
    }
    close(fd);
  }
}

void HeldPort::Release() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

CrmdProcess::CrmdProcess(const std::vector<std::string>& args, const std::string& log_path) {
  const std::string crmd = std::string(CRMD_BINARY_DIR) + "/src/app/crmd";
  std::vector<std::string> argv_s = {crmd};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  if (posix_spawn(&pid_, crmd.c_str(), &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

void CrmdProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace crmd::testing

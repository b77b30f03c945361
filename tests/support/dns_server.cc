#include "tests/support/dns_server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

extern char** environ;

namespace crmd::testing {

DnsServer::DnsServer() {
  std::string tmpl = ::testing::TempDir() + "crmd-dns-XXXXXX";
  char* made = mkdtemp(tmpl.data());
  dir_ = made ? made : "";
  zone_file_ = dir_ + "/zone.json";
  Write();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  std::string script = std::string(CRMD_SOURCE_DIR) + "/tests/support/dns_server.py";
  std::vector<std::string> args = {"/usr/bin/python3", script, zone_file_};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  std::string line;  // the server prints its port once both sockets listen
  pollfd p{.fd = fds[0], .events = POLLIN};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    if (poll(&p, 1, 200) > 0) {
      char buf[64];
      ssize_t n = read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
  }
  close(fds[0]);
  port_ = std::atoi(line.c_str());
  if (port_ == 0) ADD_FAILURE() << "the DNS server did not start (is python3-dnslib installed?)";
}

DnsServer::~DnsServer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

void DnsServer::SetTxt(const std::string& name, const std::vector<std::string>& values) {
  if (values.empty()) {
    zone_["records"].erase(name);
  } else {
    nlohmann::json records = nlohmann::json::array();
    for (const auto& v : values) records.push_back({{"type", "TXT"}, {"value", v}});
    zone_["records"][name] = records;
  }
  Write();
}

void DnsServer::Set(const std::string& name, const nlohmann::json& records) {
  if (records.empty())
    zone_["records"].erase(name);
  else
    zone_["records"][name] = records;
  Write();
}

void DnsServer::Drop(const std::string& name) {
  zone_["drop"].push_back(name);
  Write();
}

void DnsServer::Write() {
  // Written whole and renamed, so the server never reads half a file.
  std::string tmp = zone_file_ + ".tmp";
  std::ofstream(tmp) << zone_.dump();
  std::filesystem::rename(tmp, zone_file_);
}

}  // namespace crmd::testing

#include "tests/integration/tools_marketing/dovecot.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/crmd_process.h"

extern char** environ;

namespace crmd::testing {
namespace {

std::string ProcessUserName() {
  const passwd* pw = getpwuid(getuid());
  return pw ? pw->pw_name : "nobody";
}

bool PortAccepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

std::string DovecotConfig(const std::string& dir, int imap, int pop3) {
  const bool root = getuid() == 0;
  const std::string me = ProcessUserName();
  const std::string internal = root ? "dovecot" : me, login = root ? "dovenull" : me;
  std::ostringstream c;
  c << "protocols = imap pop3\nlisten = 127.0.0.1\n"
    << "base_dir = " << dir << "/run\nstate_dir = " << dir << "/state\n"
    << "log_path = " << dir << "/dovecot.log\n"
    << "ssl = no\ndisable_plaintext_auth = no\nauth_mechanisms = plain login\n"
    << "default_internal_user = " << internal << "\ndefault_internal_group = " << internal
    << "\ndefault_login_user = " << login << "\nfirst_valid_uid = 1\n"
    << "passdb {\n  driver = passwd-file\n  args = " << dir << "/passwd\n}\n"
    << "userdb {\n  driver = static\n  args = uid=" << internal << " gid=" << internal
    << " home=" << dir << "/mail/%u\n}\n"
    << "mail_location = maildir:" << dir << "/mail/%u/Maildir\n"
    << "service imap-login {\n  chroot =\n  inet_listener imap {\n    address = 127.0.0.1\n"
    << "    port = " << imap << "\n  }\n  inet_listener imaps {\n    port = 0\n  }\n}\n"
    << "service pop3-login {\n  chroot =\n  inet_listener pop3 {\n    address = 127.0.0.1\n"
    << "    port = " << pop3 << "\n  }\n  inet_listener pop3s {\n    port = 0\n  }\n}\n"
    << "service anvil {\n  chroot =\n}\n";
  return c.str();
}

// The output of a command line (tests only: every argument is ours).
std::string CommandOutput(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

}  // namespace

Dovecot::Dovecot() {
  const std::string dir = dir_.path();
  // The login and mail processes of another user must reach the directories.
  chmod(dir.c_str(), 0755);
  for (const char* sub : {"/run", "/state", "/mail"}) mkdir((dir + sub).c_str(), 0777);
  chmod((dir + "/mail").c_str(), 0777);
  dir_.Write("passwd", user() + ":{PLAIN}" + password() + "::::::\n");
  const int imap = FreePort(), pop3 = FreePort();
  const std::string conf = dir_.Write("dovecot.conf", DovecotConfig(dir, imap, pop3));
  std::vector<std::string> args = {"/usr/sbin/dovecot", "-F", "-c", conf};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    pid_ = -1;
    return;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    if (PortAccepts(imap) && PortAccepts(pop3)) {
      imap_port_ = imap;
      pop3_port_ = pop3;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Dovecot::~Dovecot() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

std::string Dovecot::ImapUrl() const {
  return "imap://" + user() + ":" + password() + "@127.0.0.1:" + std::to_string(imap_port_) +
         "/INBOX";
}

std::string Dovecot::Pop3Url() const {
  return "pop3://" + user() + ":" + password() + "@127.0.0.1:" + std::to_string(pop3_port_) + "/";
}

bool Dovecot::Append(const std::string& raw) const {
  static int n = 0;
  std::string file = dir_.Write("append-" + std::to_string(++n) + ".eml", raw);
  std::string cmd = "curl -s -S -u " + user() + ":" + password() + " -T " + file +
                    " imap://127.0.0.1:" + std::to_string(imap_port_) + "/INBOX";
  return std::system(cmd.c_str()) == 0;
}

int Dovecot::Count() const {
  std::string out = CommandOutput("curl -s -u " + user() + ":" + password() + " imap://127.0.0.1:" +
                                  std::to_string(imap_port_) + "/INBOX -X 'UID SEARCH ALL'");
  if (out.rfind("* SEARCH", 0) != 0) return -1;
  std::istringstream words(out.substr(8));
  int count = 0;
  std::string w;
  while (words >> w) ++count;
  return count;
}

std::string Dovecot::Log() const { return mail::testing::ReadFile(dir_.path() + "/dovecot.log"); }

}  // namespace crmd::testing

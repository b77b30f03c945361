#include "tests/unit/mail/python.h"

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
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

extern char** environ;

namespace crmd::mail::testing {
namespace {

constexpr const char* kSinkScript = R"PY(
import asyncio, json, os, ssl, subprocess, sys
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

outdir, mode = sys.argv[1], sys.argv[2]
port = int(sys.argv[3]) if len(sys.argv) > 3 else 0

class Handler:
    count = 0
    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        if address.startswith('blocked'):
            return '550 5.7.1 Sender not allowed'
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return '250 OK'
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith('reject'):
            return '550 5.1.1 No such user here'
        if address.startswith('later'):
            return '451 4.3.0 Try again later'
        envelope.rcpt_tos.append(address)
        return '250 OK'
    async def handle_DATA(self, server, session, envelope):
        if any(r.startswith('spam') for r in envelope.rcpt_tos):
            return '554 5.7.1 Message rejected as spam'
        Handler.count += 1
        base = os.path.join(outdir, '%04d' % Handler.count)
        with open(base + '.json.tmp', 'w') as f:
            json.dump({'mail_from': envelope.mail_from, 'rcpt_tos': envelope.rcpt_tos,
                       'mail_options': envelope.mail_options, 'peer': list(session.peer)}, f)
        with open(base + '.eml.tmp', 'wb') as f:
            f.write(envelope.original_content)
        os.rename(base + '.json.tmp', base + '.json')
        os.rename(base + '.eml.tmp', base + '.eml')
        return '250 2.0.0 Message accepted'

def authenticator(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.login == b'user' \
        and auth_data.password == b'secret'
    return AuthResult(success=ok, handled=False)  # handled=False: the server answers 535

def tls_context():
    cert, key = os.path.join(outdir, 'cert.pem'), os.path.join(outdir, 'key.pem')
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key,
                    '-out', cert, '-days', '1', '-subj', '/CN=localhost',
                    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
                   check=True, capture_output=True)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    return ctx

async def main():
    kwargs, server_ssl = {}, None
    if mode == 'auth':
        kwargs = dict(authenticator=authenticator, auth_required=True, auth_require_tls=False)
    elif mode == 'starttls':
        kwargs = dict(tls_context=tls_context(), require_starttls=True)
    elif mode == 'smtps':
        server_ssl = tls_context()
    elif mode == 'idle1s':
        kwargs = dict(timeout=1)
    elif mode == 'utf8':  # advertises SMTPUTF8 (RFC 6531)
        kwargs = dict(enable_SMTPUTF8=True)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(Handler(), **kwargs), '127.0.0.1', port,
                                      ssl=server_ssl, reuse_address=True)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main())
)PY";

pid_t Spawn(const std::vector<std::string>& args, int out_fd, int err_fd) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

}  // namespace

TempDir::TempDir() {
  std::string tmpl = ::testing::TempDir() + "crmd-mail-XXXXXX";
  char* made = mkdtemp(tmpl.data());
  path_ = made ? made : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Write(const std::string& name, const std::string& content) const {
  std::string p = path_ + "/" + name;
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

PythonRun RunPython(const std::string& script, const std::vector<std::string>& args) {
  TempDir dir;
  std::vector<std::string> argv = {kPython, dir.Write("check.py", script)};
  argv.insert(argv.end(), args.begin(), args.end());
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {};
  pid_t pid = Spawn(argv, fds[1], fds[1]);
  close(fds[1]);
  PythonRun run;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) run.output.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  }
  return run;
}

SmtpSink::SmtpSink(const std::string& mode, int port) {
  std::string script = dir_.Write("sink.py", kSinkScript);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  std::string log = dir_.path() + "/sink.log";
  int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  pid_ = Spawn({kPython, script, dir_.path(), mode, std::to_string(port)}, fds[1], err);
  close(fds[1]);
  close(err);
  // The server prints its port once it listens.
  std::string line;
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
  if (port_ == 0) {
    ADD_FAILURE() << "SMTP sink did not start: " << ReadFile(log);
  }
}

SmtpSink::~SmtpSink() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

bool SmtpSink::WaitFor(int n) const {
  char name[16];
  std::snprintf(name, sizeof name, "/%04d.eml", n);
  for (int i = 0; i < 200; ++i) {
    if (std::filesystem::exists(dir_.path() + name)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string SmtpSink::Eml(int n) const {
  char name[16];
  std::snprintf(name, sizeof name, "/%04d.eml", n);
  return ReadFile(dir_.path() + name);
}

std::string SmtpSink::Meta(int n) const {
  char name[16];
  std::snprintf(name, sizeof name, "/%04d.json", n);
  return ReadFile(dir_.path() + name);
}

std::map<std::string, std::vector<std::string>> SmtpSink::MessageIdsByRecipient() const {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir())) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    auto meta = nlohmann::json::parse(in, nullptr, false);
    if (meta.is_discarded()) continue;  // being written
    std::string eml =
        ReadFile(entry.path().parent_path().string() + "/" + entry.path().stem().string() + ".eml");
    std::string id;
    size_t p = eml.find("\r\nMessage-ID: ");
    if (p != std::string::npos) id = eml.substr(p + 14, eml.find("\r\n", p + 14) - p - 14);
    for (const auto& r : meta["rcpt_tos"]) out[r.get<std::string>()].push_back(id);
  }
  return out;
}

size_t SmtpSink::MessageCount() const {
  size_t n = 0;
  for (const auto& [rcpt, ids] : MessageIdsByRecipient()) n += ids.size();
  return n;
}

}  // namespace crmd::mail::testing

#pragma once
// Independent checkers for the mail tests: Debian's /usr/bin/python3 with its email
// package, python3-dkim and python3-aiosmtpd (scripts/setup-debian.sh installs them; the
// python3 first on PATH may be another one without them).
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace crmd::mail::testing {

inline constexpr const char* kPython = "/usr/bin/python3";

// A fresh directory under the test temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const;  // -> path

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);

struct PythonRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `script` (Python source) with `args`; the arguments are passed without a shell.
PythonRun RunPython(const std::string& script, const std::vector<std::string>& args = {});

// An SMTP server (aiosmtpd) on 127.0.0.1 and a port of its choosing, for the lifetime of
// the object. Each accepted message is written to <dir>/NNNN.eml (the bytes of DATA) with
// NNNN.json beside it: {"mail_from", "rcpt_tos", "peer"} (the client's address and port).
// Recipients starting with "reject" get 550 at RCPT, "later" 451 at RCPT, "spam" 554
// after DATA; a sender starting with "blocked" gets 550 at MAIL. `mode`: "plain", "auth" (AUTH
// PLAIN/LOGIN as user/secret required, allowed without TLS), "starttls" (STARTTLS required),
// "smtps" (implicit TLS) or "idle1s" (the server closes a connection idle for a second); the TLS
// modes write their certificate to <dir>/cert.pem.
class SmtpSink {
 public:
  // `port` 0: one of the system's choosing; otherwise that port (a relay coming back).
  explicit SmtpSink(const std::string& mode = "plain", int port = 0);
  ~SmtpSink();
  SmtpSink(const SmtpSink&) = delete;
  SmtpSink& operator=(const SmtpSink&) = delete;

  int port() const { return port_; }
  const std::string& dir() const { return dir_.path(); }
  std::string cert_file() const { return dir_.path() + "/cert.pem"; }
  // Waits up to 10 s for the n-th message (1-based); false if it never came.
  bool WaitFor(int n) const;
  std::string Eml(int n) const;
  std::string Meta(int n) const;
  // Every message held now, by envelope recipient: the Message-ID of each (one entry per
  // message received, so a duplicate delivery shows as the same id twice). A message still
  // being written is left out.
  std::map<std::string, std::vector<std::string>> MessageIdsByRecipient() const;
  size_t MessageCount() const;

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace crmd::mail::testing

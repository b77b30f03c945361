#pragma once
// A real IMAP (and POP3) server for the bounce mailbox tests: Debian's dovecot-imapd and
// dovecot-pop3d (scripts/setup-debian.sh), started by the test on loopback with its own
// configuration in a temp dir (no system service), one user "bounces" with a Maildir.
// Run as root (as the tests are here), its login and mail processes take the dovecot and
// dovenull users the package made; otherwise everything runs as the test's own user.
// Mails are delivered and counted with the curl command line over IMAP, not with crmd's
// client. Stopped (SIGTERM) by the destructor.
#include <sys/types.h>

#include <string>

#include "tests/unit/mail/python.h"

namespace crmd::testing {

class Dovecot {
 public:
  Dovecot();
  ~Dovecot();
  Dovecot(const Dovecot&) = delete;
  Dovecot& operator=(const Dovecot&) = delete;

  bool running() const { return imap_port_ != 0; }
  std::string user() const { return "bounces"; }
  std::string password() const { return "mailbox-pass-1234"; }
  // imap://bounces:<password>@127.0.0.1:<port>/INBOX (and pop3://...).
  std::string ImapUrl() const;
  std::string Pop3Url() const;
  // IMAP APPEND of `raw` into INBOX; false when the server refused it.
  bool Append(const std::string& raw) const;
  // How many mails INBOX holds now; -1 when it cannot be read.
  int Count() const;
  std::string Log() const;

 private:
  mail::testing::TempDir dir_;
  pid_t pid_ = -1;
  int imap_port_ = 0, pop3_port_ = 0;
};

}  // namespace crmd::testing

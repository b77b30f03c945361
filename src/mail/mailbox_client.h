#pragma once
// A mailbox crmd reads (the bounce mailbox, docs/mail.md): IMAP or POP3 through libcurl,
// TLS when the URL says imaps:// or pop3s:// (the server's certificate and name checked
// against the system's CA store), STARTTLS when an imap:// or pop3:// server offers it.
//
// The URL is scheme://user:password@host[:port]/<mailbox> (IMAP: the mailbox, INBOX when
// none; POP3 has one). Its password is never in an error text or a log line: Redacted()
// is what may be shown.
//
// One session per object: List() the mails there are now, Fetch() and Delete() them by
// the id List() gave, Finish() to make the deletions take effect (IMAP EXPUNGE; POP3
// commits them when the session ends). Not thread-safe: one per poll.
#include <memory>
#include <string>
#include <vector>

#include "src/core/result.h"

typedef void CURL;

namespace crmd::mail {

struct MailboxOptions {
  std::string url;
  long connect_timeout_ms = 10'000;
  long timeout_ms = 60'000;                  // one command, a mail's transfer included
  size_t max_mail_bytes = 10 * 1024 * 1024;  // a larger mail fails its Fetch
};

// scheme://host[:port]/path without the user and password.
std::string RedactedMailboxUrl(const std::string& url);

class MailboxClient {
 public:
  explicit MailboxClient(MailboxOptions options);
  ~MailboxClient();
  MailboxClient(const MailboxClient&) = delete;
  MailboxClient& operator=(const MailboxClient&) = delete;

  std::string Redacted() const { return RedactedMailboxUrl(options_.url); }
  // IMAP UIDs or POP3 message numbers, oldest first. kUnavailable when the server cannot
  // be reached or refuses the login.
  Result<std::vector<std::string>> List();
  Result<std::string> Fetch(const std::string& id);
  Status Delete(const std::string& id);
  Status Finish();

 private:
  Result<std::string> Perform(const std::string& url, const std::string& command, bool body);
  bool pop3() const { return options_.url.rfind("pop3", 0) == 0; }
  std::string Base() const;

  const MailboxOptions options_;
  CURL* curl_ = nullptr;
};

}  // namespace crmd::mail

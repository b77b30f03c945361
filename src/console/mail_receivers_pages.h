#pragma once
// The console's Mail receivers page (administrators only, shell.h's rules):
//   GET /console/mail-receivers   each configured provider event receiver: enabled, whether
//                                 its credentials are set (never the credentials), the URL
//                                 to give the provider, what it has received; and the
//                                 bounce mailbox: its domain, its URL without the
//                                 password, and the mails it could not attribute
// Read-only: receivers are configured with crmctl mail receiver or REST
// /admin/mail-receivers (docs/mail.md "Provider event receivers"). It calls
// marketing::MailReceivers, as they do. Thread-safe; the handler blocks on the database.
#include <string>

#include "src/console/shell.h"
#include "src/marketing/bounce_mailbox.h"
#include "src/marketing/mail_receivers.h"

namespace crmd::console {

struct MailReceiversPagesDeps {
  marketing::MailReceivers* receivers = nullptr;
  ConsolePeople people;
  std::string rest_base_url;  // <issuer><rest base>, for the receiving URLs
  // Null when bounce_domain is not set; the URL as RedactedMailboxUrl() shows it, "" when
  // the mailbox is not polled.
  const marketing::BounceMailbox* bounce_mailbox = nullptr;
  std::string bounce_domain, bounce_mailbox_url;
};

ConsoleRoutes MailReceiversRoutes(MailReceiversPagesDeps deps);

}  // namespace crmd::console

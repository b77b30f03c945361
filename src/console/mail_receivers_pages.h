#pragma once
// The console's Mail receivers page (administrators only, shell.h's rules):
//   GET /console/mail-receivers   each configured provider event receiver: enabled, whether
//                                 its credentials are set (never the credentials), the URL
//                                 to give the provider, what it has received
// Read-only: receivers are configured with crmctl mail receiver or REST
// /admin/mail-receivers (docs/mail.md "Provider event receivers"). It calls
// marketing::MailReceivers, as they do. Thread-safe; the handler blocks on the database.
#include <string>

#include "src/console/shell.h"
#include "src/marketing/mail_receivers.h"

namespace crmd::console {

struct MailReceiversPagesDeps {
  marketing::MailReceivers* receivers = nullptr;
  ConsolePeople people;
  std::string rest_base_url;  // <issuer><rest base>, for the receiving URLs
};

ConsoleRoutes MailReceiversRoutes(MailReceiversPagesDeps deps);

}  // namespace crmd::console

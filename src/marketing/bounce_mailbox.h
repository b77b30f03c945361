#pragma once
// What crmd does with one mail of the bounce mailbox (docs/mail.md, "Bounce mailbox"):
// a delivery status notification (RFC 3464) or feedback report (RFC 5965) whose VERP
// return path (src/mail/verp.h) is crmd's own becomes the same event a provider receiver
// would record (hard or soft bounce, complaint) for that message's contact and campaign,
// through MailReceivers (suppression, soft-bounce threshold, campaign counts), once per
// report Message-ID. Anything else is unattributed: left in the mailbox and recorded
// (bounce_mailbox_repo) so an operator sees it.
// Thread-safe: no state of its own beyond the injected services.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/mail/verp.h"
#include "src/marketing/bounce_mailbox_repo.h"
#include "src/store/db.h"

namespace crmd::marketing {

class MailReceivers;

struct MailboxOutcome {
  enum class Kind {
    kApplied,       // attributed and recorded: delete the mail
    kDuplicate,     // this report was applied before: delete the mail
    kUnattributed,  // leave the mail where it is
  };
  Kind kind = Kind::kUnattributed;
  std::string report_id;
  std::string reason;     // kUnattributed: why
  nlohmann::json result;  // kApplied: what MailReceivers answered for the event
  bool deletable() const { return kind != Kind::kUnattributed; }
};
// "applied" | "duplicate" | "unattributed".
const char* ToString(MailboxOutcome::Kind kind);

class BounceMailbox {
 public:
  BounceMailbox(store::Database& db, const Clock& clock, MailReceivers& receivers,
                mail::VerpAddresses verp)
      : db_(db), clock_(clock), receivers_(receivers), verp_(std::move(verp)) {}
  BounceMailbox(const BounceMailbox&) = delete;
  BounceMailbox& operator=(const BounceMailbox&) = delete;

  Result<MailboxOutcome> Process(std::string_view raw, const std::string& request_id);

  Result<int64_t> UnattributedCount() const;
  Result<std::vector<bounce_mailbox_repo::Unattributed>> Unattributed(int limit) const;

 private:
  Result<MailboxOutcome> Unattributable(std::string_view raw, std::string reason);

  store::Database& db_;
  const Clock& clock_;
  MailReceivers& receivers_;
  const mail::VerpAddresses verp_;
};

// {"report_id", "subject", "from", "reason", "first_seen_at", "last_seen_at"}.
nlohmann::json ToJson(const bounce_mailbox_repo::Unattributed& u);

}  // namespace crmd::marketing

#pragma once
// The durable side of campaign delivery (docs/mail.md). Every piece of state is a row, so
// any node may do any part of the work and a crash loses nothing:
//  - Advance(): scheduled campaigns whose time has come start sending; a sending campaign
//    whose every recipient has a final state (sent, failed, skipped) becomes `sent`.
//  - Lease(): due pending recipients of sending campaigns, leased for lease_s. A recipient
//    whose contact is no longer subscribed is marked skipped here, just before its turn.
//  - Record(): the outcome of one message, in one transaction with its counter: sent;
//    failed (a permanent refusal; at RCPT the contact becomes `bounced`); or due again
//    after a backoff (a temporary refusal), failed once max_attempts is reached.
//  - Unsubscribe/Feedback/Opened/Clicked: what happens after delivery, counted once per
//    recipient in campaign_stats.
// Thread-safe; several workers (or nodes) may run concurrently.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/governance/confirmations.h"
#include "src/marketing/campaign_sends_repo.h"
#include "src/store/db.h"

namespace crmd::crm {
class ContactService;
}

namespace crmd::marketing {

struct SendPolicy {
  int64_t lease_s = 120;       // longer than one message's SMTP timeout
  int max_attempts = 6;        // temporary failures before a recipient is failed
  int64_t retry_base_s = 60;   // first retry delay; doubles per attempt
  int64_t retry_max_s = 3600;  // cap of one delay
};

// What became of one message.
struct SendReport {
  enum class Kind {
    kSent,
    kTemporary,          // 4xx or trouble at this recipient: retry later
    kRejected,           // a permanent refusal of this message (5xx at DATA, bad content)
    kRecipientRejected,  // a permanent refusal of the address (5xx at RCPT): bounced
    kNotAttempted,       // nothing was sent (the relay is down, the node stops): lease back
  };
  Kind kind = Kind::kSent;
  std::string reason;  // for the per-recipient log; never credentials
  int smtp_code = 0;
  std::string message_id;
  int64_t retry_at = 0;  // kNotAttempted: when it may be tried again (0: now)
};

struct RecipientPage {
  std::vector<campaign_sends_repo::RecipientRow> items;
  std::optional<std::string> next_cursor;
};

nlohmann::json ToJson(const campaign_sends_repo::RecipientRow& r);
nlohmann::json ToJson(const campaign_sends_repo::Stats& s);

class CampaignDelivery {
 public:
  CampaignDelivery(store::Database& db, const Clock& clock, crm::ContactService& contacts,
                   SendPolicy policy = {})
      : db_(db), clock_(clock), contacts_(contacts), policy_(policy) {}
  CampaignDelivery(const CampaignDelivery&) = delete;
  CampaignDelivery& operator=(const CampaignDelivery&) = delete;

  const SendPolicy& policy() const { return policy_; }
  void set_policy(SendPolicy policy) { policy_ = policy; }

  // Returns how many campaigns changed status.
  Result<int> Advance();
  Result<std::vector<campaign_sends_repo::QueuedRecipient>> Lease(int limit);
  Status Record(const campaign_sends_repo::QueuedRecipient& r, const SendReport& report);

  // Pauses a sending campaign whose content cannot be rendered (audited with `reason`);
  // its queue stays as it is, to continue once it is fixed and activated again.
  Status Suspend(int64_t campaign_id, const std::string& reason);

  Result<campaign_sends_repo::Stats> Stats(int64_t campaign_id) const;
  // status: "" (any) | pending | sent | failed | skipped.
  Result<RecipientPage> Recipients(int64_t campaign_id, const std::string& status,
                                   std::string_view cursor, int limit) const;

  // The unsubscribe link (GET page confirmed, or RFC 8058 one-click POST): the contact
  // becomes unsubscribed (status machine, event) unless it already is not subscribed;
  // counted once for the campaign. Returns the contact's email for the page.
  Result<std::string> Unsubscribe(int64_t contact_id, int64_t campaign_id,
                                  const std::string& request_id);
  // A bounce or complaint report from a relay: type "bounce" | "complaint". The campaign
  // is the one of `message_id` when given and known, else the contact's latest.
  // An address no contact has is entered on the suppression list ("suppressed": true).
  Result<nlohmann::json> Feedback(const governance::Actor& actor, const std::string& email,
                                  const std::string& type, const std::string& message_id);
  // Feedback in the caller's transaction, for an address already normalised; type also
  // "unsubscribe": the contact moves to unsubscribed as by the unsubscribe link (an
  // address no contact has is suppressed as unsubscribed).
  Result<nlohmann::json> FeedbackIn(store::Conn& c, const governance::Actor& actor,
                                    const std::string& normalised, const std::string& type,
                                    const std::string& message_id);
  Status Opened(int64_t contact_id, int64_t campaign_id);
  // `url`: the link followed: counted for the report's clicks per link ("" counts none) and
  // named in the email.clicked event.
  Status Clicked(int64_t contact_id, int64_t campaign_id, const std::string& url = "");

  // Confirmable "resend to the undelivered" (activate_campaign with resend=undelivered):
  // a sent or paused campaign's failed recipients who are still subscribed go out again in
  // a new round (new Message-IDs), and the campaign is sending again.
  Result<governance::Preview> PreviewResend(store::Conn& c, int64_t campaign_id) const;
  Result<nlohmann::json> Resend(store::Conn& c, const governance::Actor& actor,
                                int64_t campaign_id);

  // Called in the activation transaction with the recipients it added: queued grows by
  // them (a re-activation after a pause adds only the new ones; counting the rows instead
  // would miss recipients whose contacts were deleted since).
  static Status OnActivated(store::Conn& c, int64_t campaign_id, int64_t added);

 private:
  // The campaign of `message_id` when it was sent to this contact, else the contact's latest.
  static Result<std::optional<int64_t>> CampaignOf(store::Conn& c, int64_t contact_id,
                                                   const std::string& message_id);
  Status Bounce(store::Conn& c, const governance::Actor& actor, int64_t contact_id,
                const char* status, const std::string& reason);
  // The email.* event of a report FeedbackIn applied to a contact (email_events.h).
  Status FeedbackEvent(store::Conn& c, const governance::Actor& actor, int64_t contact_id,
                       const std::string& email, const std::string& type,
                       const std::string& message_id, std::optional<int64_t> campaign_id,
                       bool counted, int64_t now);

  store::Database& db_;
  const Clock& clock_;
  crm::ContactService& contacts_;
  SendPolicy policy_;
};

}  // namespace crmd::marketing

#pragma once
// SQL of a campaign's delivery: the per-recipient send queue (campaign_recipients), the
// aggregate counters (campaign_stats), and the status moves the send loop makes
// (scheduled -> sending -> sent). Portable SQL, bound parameters only.
// Stateless; any thread, with its own Conn.
// REQUIRES: lookups inside Database::Read or Write; every write inside Database::Write.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/crm/trace_link.h"
#include "src/store/db.h"

namespace crmd::marketing::campaign_sends_repo {

// One due recipient, with what rendering needs.
struct QueuedRecipient {
  int64_t campaign_id = 0;
  int64_t contact_id = 0;
  int64_t round = 1;
  int64_t attempts = 0;  // attempts made before this lease
  // The row's due_at while this lease holds (now + lease_s). Retry and Release change the
  // row only while it still has this due_at: once the lease ran out and another thread or
  // node leased the row again, a late Retry or Release of the first lease is a no-op.
  int64_t lease_until = 0;
  std::string email, first_name, last_name, phone, custom_fields_json;
  std::string contact_status;
  // The campaign's trace (SetTrace); empty when it has none. Each message is a child span.
  std::string traceparent, tracestate;
};

// Records the trace of the request that activated (or resent) the campaign: its sends
// continue it (migration 0052).
Status SetTrace(store::Conn& c, int64_t campaign_id, const crm::TraceLink& trace);

// Campaigns in `scheduled` whose send_at has come: now `sending`. Returns their ids.
Result<std::vector<int64_t>> PromoteDue(store::Conn& c, int64_t now);
// Campaigns in `sending` with no pending recipient left: now `sent` (finished_at = now).
// Returns their ids.
Result<std::vector<int64_t>> FinishDrained(store::Conn& c, int64_t now);

// The due_at of pending recipients of a campaign that is not sending (scheduled, paused):
// past every real time, so the queue's index walk never meets them.
inline constexpr int64_t kParkedDueAt = 4'000'000'000'000'000'000;
// Parks the campaign's pending recipients that are not leased right now; Unpark makes the
// parked ones due now. Both are one indexed update.
Status Park(store::Conn& c, int64_t campaign_id, int64_t now);
Status Unpark(store::Conn& c, int64_t campaign_id);

// A sending campaign that cannot be sent as it is (its content no longer parses): paused,
// so that it can be edited and activated again. False when it was not sending.
Result<bool> Suspend(store::Conn& c, int64_t campaign_id, int64_t now);

// Up to `limit` pending recipients of sending campaigns whose due_at has passed, leased
// until now + lease_s (attempts + 1). Oldest due first.
Result<std::vector<QueuedRecipient>> LeaseDue(store::Conn& c, int64_t now, int64_t lease_s,
                                              int limit);

// Final states. Each also bumps the matching counter in campaign_stats. A row that is no
// longer pending (a duplicate record after a lease ran out) is left alone: returns false.
Result<bool> MarkSent(store::Conn& c, int64_t campaign_id, int64_t contact_id,
                      const std::string& message_id, int64_t now);
Result<bool> MarkFailed(store::Conn& c, int64_t campaign_id, int64_t contact_id,
                        const std::string& reason, int smtp_code, int64_t now);
Result<bool> MarkSkipped(store::Conn& c, int64_t campaign_id, int64_t contact_id,
                         const std::string& reason, int64_t now);
// Not now: due again at `due_at`, with the reason kept for the log. Only while the lease
// `lease_until` (QueuedRecipient::lease_until) still holds the row.
Status Retry(store::Conn& c, int64_t campaign_id, int64_t contact_id, int64_t lease_until,
             const std::string& reason, int smtp_code, int64_t due_at, int64_t now);
// Gives the lease back without counting an attempt (the relay is down, the node stops, or
// too little of the lease is left to send), due at `due_at`; only while the lease
// `lease_until` still holds the row.
Status Release(store::Conn& c, int64_t campaign_id, int64_t contact_id, int64_t lease_until,
               int64_t due_at);

// Events after delivery, once per recipient: kind is one of "bounced", "complained",
// "unsubscribed", "opened", "clicked". Sets the recipient's <kind>_at when it was unset and
// bumps the counter; returns whether it was the first time.
Result<bool> MarkEvent(store::Conn& c, int64_t campaign_id, int64_t contact_id,
                       const std::string& kind, int64_t now);
// The most recent campaign sent to this contact (for bounce/complaint attribution).
Result<std::optional<int64_t>> LastCampaignFor(store::Conn& c, int64_t contact_id);
// The campaign and contact of a Message-ID this server gave.
Result<std::optional<std::pair<int64_t, int64_t>>> FindByMessageId(store::Conn& c,
                                                                   const std::string& message_id);

// The address (the contact's now) and the Message-ID of one recipient; nullopt when the
// row or the contact is gone.
struct SentMessage {
  std::string email;
  std::optional<std::string> message_id;
};
Result<std::optional<SentMessage>> MessageOf(store::Conn& c, int64_t campaign_id,
                                             int64_t contact_id);

struct Stats {
  int64_t queued = 0, sent = 0, failed = 0, skipped = 0, bounced = 0, complained = 0,
          unsubscribed = 0, opened = 0, clicked = 0;
  // Of `bounced`, those whose message was never accepted (a 5xx at RCPT): not among `sent`.
  int64_t bounced_unsent = 0;
  int64_t pending() const { return queued - sent - failed - skipped; }
};
Result<Stats> LoadStats(store::Conn& c, int64_t campaign_id);
// The campaigns in which the contact is a recipient still pending.
Result<std::vector<int64_t>> PendingCampaignsOfContact(store::Conn& c, int64_t contact_id);
// The recipients still pending of a contact about to be deleted count as skipped, so that
// pending() (queued - sent - failed - skipped) is not left above 0 once the rows are gone
// (ON DELETE CASCADE); answers how many. A message in flight to it is recorded nowhere:
// its row is gone, so Finalise moves nothing.
Result<int64_t> SkipPendingOfContact(store::Conn& c, int64_t contact_id);
// queued += `n`, the recipients an activation added.
Status AddQueued(store::Conn& c, int64_t campaign_id, int64_t n);

struct RecipientRow {
  int64_t contact_id = 0;
  std::string email;
  std::string status;  // pending | sent | failed | skipped
  std::optional<std::string> reason;
  int64_t attempts = 0;
  int64_t round = 1;
  std::optional<int64_t> smtp_code, sent_at, opened_at, clicked_at, bounced_at, complained_at,
      unsubscribed_at;
  std::optional<std::string> message_id;
  int64_t updated_at = 0;
};
// By contact id after `after_contact_id`, limit+1 rows; `status` empty: any.
Result<std::vector<RecipientRow>> ListRecipients(store::Conn& c, int64_t campaign_id,
                                                 const std::string& status,
                                                 int64_t after_contact_id, int limit);

// Failed recipients of the campaign whose contact is still subscribed.
Result<int64_t> CountResendable(store::Conn& c, int64_t campaign_id);
// Makes them pending again in round `round`, due now; returns how many. Counters: failed
// goes down and nothing else moves (queued already counts them).
Result<int64_t> RequeueFailed(store::Conn& c, int64_t campaign_id, int64_t round, int64_t now);

// The send queue at `now`: pending recipients, and those due of campaigns that are sending
// (what LeaseDue walks; parked and leased rows are not due).
Result<store::QueueStats> QueueStats(store::Conn& c, int64_t now);

}  // namespace crmd::marketing::campaign_sends_repo

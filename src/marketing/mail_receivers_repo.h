#pragma once
// SQL of the provider event receivers (tables mail_receivers, mail_receiver_events and
// contact_soft_bounces, migration 0074). Stateless; any thread, with its own Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::marketing::mail_receivers_repo {

struct Row {
  std::string provider;
  std::optional<std::string> signing_key;  // Mailgun HMAC key / SendGrid public key
  std::optional<std::string> username;
  std::optional<std::string> password_hash;
  bool enabled = true;
  int64_t received_count = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::optional<int64_t> last_received_at;
  std::optional<std::string> topic_arn;  // SES: the SNS topic taken
};

Result<std::vector<Row>> List(store::Conn& c);
Result<std::optional<Row>> Find(store::Conn& c, const std::string& provider);
// Inserts the row, or replaces every configurable column of the provider's row.
Status Save(store::Conn& c, const Row& r);
Result<bool> Delete(store::Conn& c, const std::string& provider);
Status CountReceived(store::Conn& c, const std::string& provider, int64_t now);

// Records an event id (or a single-use token key) as processed; false when it already was.
Result<bool> MarkProcessed(store::Conn& c, const std::string& provider, const std::string& event_id,
                           int64_t now);
// Forgets processed ids received before `before`.
Status Prune(store::Conn& c, int64_t before);

// Counts one soft bounce for the contact; answers its count within the window: a soft
// bounce more than `window_s` after the window's first starts a new one at 1.
Result<int64_t> CountSoftBounce(store::Conn& c, int64_t contact_id, int64_t now, int64_t window_s);

}  // namespace crmd::marketing::mail_receivers_repo

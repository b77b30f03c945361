#pragma once
// SQL for contact events (table outbox_events). Promises: Insert appends one event whose
// id is greater than every id handed out before it, on both engines, and is never reused
// (so consumers can keep a high-water mark); After answers events oldest first.
// Consumers' high-water marks (table outbox_cursors) live here too. Stateless; any
// thread, with its own Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/crm/outbox.h"
#include "src/store/db.h"

namespace crmd::crm::outbox_repo {

// REQUIRES: inside Database::Write, the transaction of the change the event describes.
// `traceparent`/`tracestate`: the W3C trace context of the request that made the change
// (src/core/trace.h), carried to the work the event causes; nullopt outside a request.
Status Insert(store::Conn& c, const std::string& event_type, int64_t contact_id,
              const std::string& data_json, int64_t occurred_at,
              std::optional<std::string> traceparent = std::nullopt,
              std::optional<std::string> tracestate = std::nullopt);
// Events with id > after_id, ascending, at most `limit`.
// REQUIRES: inside Database::Read or Write.
Result<std::vector<OutboxEvent>> After(store::Conn& c, int64_t after_id, int limit);

// An event as stored: contact_id may be NULL, data is the JSON text as written.
struct StoredEvent {
  int64_t id = 0;
  std::string event_type;
  std::optional<int64_t> contact_id;
  std::string data;
  int64_t occurred_at = 0;
  std::optional<std::string> traceparent;  // see Insert
  std::optional<std::string> tracestate;
};
// Like After, without interpreting the row. REQUIRES: inside Database::Read or Write.
Result<std::vector<StoredEvent>> StoredAfter(store::Conn& c, int64_t after_id, int limit);

// The up to `limit` events after `after_id`, without reading them: how many there are and
// the id of the last (after_id when there are none). For a consumer that nothing among them
// concerns and that only moves its cursor past them (no webhook endpoint, no active
// automation): the two consumers reading every event in full were a thirtieth of a durable
// create (callgrind).
// REQUIRES: inside Database::Read or Write.
struct EventWindow {
  int count = 0;
  int64_t last_id = 0;
};
Result<EventWindow> WindowAfter(store::Conn& c, int64_t after_id, int limit);
// The events of `event_type` with after_id < id <= through_id, in id order, as StoredAfter
// reads them. REQUIRES: inside Database::Read or Write.
Result<std::vector<StoredEvent>> StoredOfTypeIn(store::Conn& c, int64_t after_id,
                                                int64_t through_id, const std::string& event_type);

// Creates `consumer`'s cursor at 0 unless it exists; creating it first also serialises
// concurrent claimers on the row. REQUIRES: inside Database::Write.
Status EnsureCursor(store::Conn& c, const std::string& consumer);
// The last event id `consumer` has handled (0 when it has no cursor).
// REQUIRES: inside Database::Read or Write.
Result<int64_t> CursorPosition(store::Conn& c, const std::string& consumer);
// REQUIRES: inside Database::Write, after EnsureCursor.
Status AdvanceCursor(store::Conn& c, const std::string& consumer, int64_t last_event_id);

}  // namespace crmd::crm::outbox_repo

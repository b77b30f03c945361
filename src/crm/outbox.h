#pragma once
// Appends contact events to outbox_events inside the caller's transaction, so an event
// exists exactly when its change committed. Delivery (webhooks, automation triggers)
// reads the table by id. Thread-safe (stateless apart from the clock).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm {

struct OutboxEvent {
  int64_t id = 0;
  std::string event_type;
  int64_t contact_id = 0;
  nlohmann::json data;
  int64_t occurred_at = 0;
};

class Outbox {
 public:
  explicit Outbox(Clock* clock) : clock_(clock) {}
  // For use inside another service's transaction (REQUIRES: Database::Write).
  // REQUIRES: event_type is one of events::kAll or events::kEmail.
  // The event records the trace of the thread's log scope (src/core/log.h), if any.
  Status Append(store::Conn& conn, std::string_view event_type, int64_t contact_id,
                const nlohmann::json& data);
  // The same, with `data` already serialized: REQUIRES a JSON object, as data.dump()
  // writes it (the bytes that webhook deliveries carry).
  Status AppendSerialized(store::Conn& conn, std::string_view event_type, int64_t contact_id,
                          std::string data);
  // Events with id > after_id, oldest first (for consumers and tests); inside the
  // caller's Read or Write.
  Result<std::vector<OutboxEvent>> After(store::Conn& conn, int64_t after_id, int limit);

 private:
  Clock* const clock_;
};

}  // namespace crmd::crm

#include "src/crm/outbox.h"

#include "src/crm/events.h"

namespace crmd::crm {

Status Outbox::Append(store::Conn& conn, std::string_view event_type, int64_t contact_id,
                      const nlohmann::json& data) {
  if (!events::IsKnown(event_type))
    return Fail(Error::Internal("unknown event type " + std::string(event_type)));
  auto r = conn.Exec(
      "INSERT INTO outbox_events (event_type, contact_id, data, occurred_at) VALUES (?, ?, ?, ?)",
      {std::string(event_type), contact_id, data.dump(), clock_->NowUnix()});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::vector<OutboxEvent>> Outbox::After(store::Conn& conn, int64_t after_id, int limit) {
  auto rows = conn.Query(
      "SELECT id, event_type, contact_id, data, occurred_at FROM outbox_events WHERE id > ? "
      "ORDER BY id LIMIT ?",
      {after_id, static_cast<int64_t>(limit)});
  if (!rows) return Fail(rows.error());
  std::vector<OutboxEvent> out;
  for (const auto& r : *rows) {
    out.push_back({.id = r.Int(0),
                   .event_type = r.Str(1),
                   .contact_id = r.Int(2),
                   .data = nlohmann::json::parse(r.Str(3), nullptr, false),
                   .occurred_at = r.Int(4)});
  }
  return out;
}

}  // namespace crmd::crm

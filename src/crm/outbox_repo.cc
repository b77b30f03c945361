#include "src/crm/outbox_repo.h"

namespace crmd::crm::outbox_repo {

Status Insert(store::Conn& c, const std::string& event_type, int64_t contact_id,
              const std::string& data_json, int64_t occurred_at,
              std::optional<std::string> traceparent, std::optional<std::string> tracestate) {
  auto r = c.Exec(
      "INSERT INTO outbox_events (event_type, contact_id, data, occurred_at, traceparent, "
      "tracestate) VALUES (?, ?, ?, ?, ?, ?)",
      {event_type, contact_id, data_json, occurred_at, store::Opt(traceparent),
       store::Opt(tracestate)});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::vector<OutboxEvent>> After(store::Conn& c, int64_t after_id, int limit) {
  auto rows = c.Query(
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

namespace {

// StoredEvents() reads these columns, in this order.
constexpr const char* kStoredSelect =
    "SELECT id, event_type, contact_id, data, occurred_at, traceparent, tracestate "
    "FROM outbox_events WHERE ";

std::vector<StoredEvent> StoredEvents(const std::vector<store::Row>& rows) {
  std::vector<StoredEvent> out;
  out.reserve(rows.size());
  for (const auto& r : rows)
    out.push_back({.id = r.Int(0),
                   .event_type = r.Str(1),
                   .contact_id = r.OptInt(2),
                   .data = r.Str(3),
                   .occurred_at = r.Int(4),
                   .traceparent = r.OptStr(5),
                   .tracestate = r.OptStr(6)});
  return out;
}

}  // namespace

Result<std::vector<StoredEvent>> StoredAfter(store::Conn& c, int64_t after_id, int limit) {
  static const std::string sql = std::string(kStoredSelect) + "id > ? ORDER BY id LIMIT ?";
  auto rows = c.Query(sql, {after_id, int64_t{limit}});
  if (!rows) return Fail(rows.error());
  return StoredEvents(*rows);
}

Result<EventWindow> WindowAfter(store::Conn& c, int64_t after_id, int limit) {
  auto row = c.QueryOne(
      "SELECT COUNT(*), COALESCE(MAX(id), ?) FROM "
      "(SELECT id FROM outbox_events WHERE id > ? ORDER BY id LIMIT ?) AS w",
      {after_id, after_id, int64_t{limit}});
  if (!row) return Fail(row.error());
  if (!*row) return EventWindow{.count = 0, .last_id = after_id};
  return EventWindow{.count = static_cast<int>((*row)->Int(0)), .last_id = (*row)->Int(1)};
}

Result<std::vector<StoredEvent>> StoredOfTypeIn(store::Conn& c, int64_t after_id,
                                                int64_t through_id, const std::string& event_type) {
  static const std::string sql =
      std::string(kStoredSelect) + "id > ? AND id <= ? AND event_type = ? ORDER BY id";
  auto rows = c.Query(sql, {after_id, through_id, event_type});
  if (!rows) return Fail(rows.error());
  return StoredEvents(*rows);
}

Status EnsureCursor(store::Conn& c, const std::string& consumer) {
  auto r = c.Exec(
      "INSERT INTO outbox_cursors (consumer, last_event_id) VALUES (?, 0) "
      "ON CONFLICT (consumer) DO NOTHING",
      {consumer});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<int64_t> CursorPosition(store::Conn& c, const std::string& consumer) {
  auto cur = c.QueryOne("SELECT last_event_id FROM outbox_cursors WHERE consumer = ?", {consumer});
  if (!cur) return Fail(cur.error());
  return *cur ? (*cur)->Int(0) : int64_t{0};
}

Status AdvanceCursor(store::Conn& c, const std::string& consumer, int64_t last_event_id) {
  auto r = c.Exec("UPDATE outbox_cursors SET last_event_id = ? WHERE consumer = ?",
                  {last_event_id, consumer});
  if (!r) return Fail(r.error());
  return Ok();
}

}  // namespace crmd::crm::outbox_repo

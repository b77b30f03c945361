#include "src/marketing/sequence_runs_repo.h"

namespace crmd::marketing::sequence_runs_repo {

Result<bool> Enrol(store::Conn& c, int64_t sequence_id, int64_t contact_id, int64_t due_at,
                   int64_t now, const crm::TraceLink& trace) {
  auto n = c.Exec(
      "INSERT INTO sequence_runs (sequence_id, contact_id, status, next_email, due_at, attempts, "
      "enrolled_at, updated_at, traceparent, tracestate) "
      "SELECT ?, id, 'active', 0, ?, 0, ?, ?, ?, ? FROM contacts WHERE id = ? "
      "ON CONFLICT (sequence_id, contact_id) DO NOTHING",
      {sequence_id, due_at, now, now, store::Opt(trace.traceparent), store::Opt(trace.tracestate),
       contact_id});
  if (!n) return Fail(n.error());
  if (*n == 0) return false;
  if (auto s = Count(c, sequence_id, "enrolled"); !s) return Fail(s.error());
  return true;
}

Result<std::vector<std::pair<int64_t, int64_t>>> FedBy(store::Conn& c, int64_t list_id) {
  auto rows = c.Query(
      "SELECT id, activated_at FROM sequences WHERE list_id = ? AND status = 'active' ORDER BY id",
      {list_id});
  if (!rows) return Fail(rows.error());
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& r : *rows) out.emplace_back(r.Int(0), r.Int(1));
  return out;
}

Result<std::vector<DueEmail>> Due(store::Conn& c, int64_t now, int limit) {
  auto rows = c.Query(
      "SELECT r.id, r.sequence_id, r.contact_id, r.next_email, r.due_at, r.attempts, s.emails, "
      "k.email, k.first_name, k.last_name, k.phone, k.custom_fields, k.status, r.traceparent, "
      "r.tracestate FROM sequence_runs r JOIN sequences s ON s.id = r.sequence_id "
      "JOIN contacts k ON k.id = r.contact_id "
      "WHERE r.status = 'active' AND r.due_at <= ? AND s.status = 'active' "
      "ORDER BY r.due_at, r.id LIMIT ?" +
          store::SkipLocked(c.dialect(), "r"),
      {now, int64_t{limit}});
  if (!rows) return Fail(rows.error());
  std::vector<DueEmail> out;
  for (const auto& r : *rows) {
    DueEmail e{.run_id = r.Int(0),
               .sequence_id = r.Int(1),
               .contact_id = r.Int(2),
               .next_email = r.Int(3),
               .due_at = r.Int(4),
               .attempts = r.Int(5),
               .emails = nlohmann::json::parse(r.Str(6), nullptr, false),
               .email = r.Str(7),
               .first_name = r.Str(8),
               .last_name = r.Str(9),
               .phone = r.Str(10),
               .custom_fields_json = r.Str(11),
               .contact_status = r.Str(12),
               .traceparent = r.Str(13),
               .tracestate = r.Str(14)};
    if (!e.emails.is_array()) e.emails = nlohmann::json::array();
    out.push_back(std::move(e));
  }
  return out;
}

Result<bool> Advance(store::Conn& c, const DueEmail& e, int64_t next_email, int64_t due_at,
                     int64_t attempts, const std::optional<std::string>& error,
                     const std::string& status, int64_t now) {
  auto n = c.Exec(
      "UPDATE sequence_runs SET next_email = ?, due_at = ?, attempts = ?, last_error = ?, "
      "status = ?, updated_at = ? WHERE id = ? AND next_email = ? AND due_at = ? AND "
      "status = 'active'",
      {next_email, due_at, attempts, store::Opt(error), status, now, e.run_id, e.next_email,
       e.due_at});
  if (!n) return Fail(n.error());
  return *n == 1;
}

Result<std::vector<int64_t>> ActiveSequencesOfContact(store::Conn& c, int64_t contact_id) {
  auto rows =
      c.Query("SELECT sequence_id FROM sequence_runs WHERE contact_id = ? AND status = 'active'",
              {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<int64_t> out;
  for (const auto& r : *rows) out.push_back(r.Int(0));
  return out;
}

Result<int64_t> ExitActiveOfContact(store::Conn& c, int64_t contact_id) {
  auto ids = ActiveSequencesOfContact(c, contact_id);
  if (!ids) return Fail(ids.error());
  for (int64_t id : *ids)
    if (auto s = Count(c, id, "exited"); !s) return Fail(s.error());
  return static_cast<int64_t>(ids->size());
}

Status Count(store::Conn& c, int64_t sequence_id, const std::string& column) {
  if (column != "enrolled" && column != "sent" && column != "failed" && column != "completed" &&
      column != "exited")
    return Fail(Errc::kInternal, "unknown sequence counter " + column);
  auto r = c.Exec("INSERT INTO sequence_stats (sequence_id, " + column +
                      ") VALUES (?, 1) ON CONFLICT (sequence_id) DO UPDATE SET " + column +
                      " = sequence_stats." + column + " + 1",
                  {sequence_id});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<Stats> LoadStats(store::Conn& c, int64_t sequence_id) {
  auto row = c.QueryOne(
      "SELECT enrolled, sent, failed, completed, exited FROM sequence_stats WHERE sequence_id = ?",
      {sequence_id});
  if (!row) return Fail(row.error());
  if (!*row) return Stats{};
  const auto& r = **row;
  return Stats{.enrolled = r.Int(0),
               .sent = r.Int(1),
               .failed = r.Int(2),
               .completed = r.Int(3),
               .exited = r.Int(4)};
}

Result<std::optional<int64_t>> FirstMissingContact(store::Conn& c,
                                                   const std::vector<int64_t>& ids) {
  for (int64_t id : ids) {
    auto row = c.QueryOne("SELECT 1 FROM contacts WHERE id = ?", {id});
    if (!row) return Fail(row.error());
    if (!*row) return std::optional<int64_t>(id);
  }
  return std::optional<int64_t>{};
}

}  // namespace crmd::marketing::sequence_runs_repo

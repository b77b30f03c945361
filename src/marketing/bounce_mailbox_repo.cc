#include "src/marketing/bounce_mailbox_repo.h"

namespace crmd::marketing::bounce_mailbox_repo {

Result<bool> Record(store::Conn& c, const Unattributed& u) {
  auto n = c.Exec(
      "INSERT INTO bounce_mailbox_unattributed (report_id, subject, sender, reason, "
      "first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (report_id) DO NOTHING",
      {u.report_id, u.subject, u.sender, u.reason, u.first_seen_at, u.last_seen_at});
  if (!n) return Fail(n.error());
  if (*n == 1) return true;
  auto moved = c.Exec(
      "UPDATE bounce_mailbox_unattributed SET last_seen_at = ?, reason = ? WHERE report_id = ?",
      {u.last_seen_at, u.reason, u.report_id});
  if (!moved) return Fail(moved.error());
  return false;
}

Status Forget(store::Conn& c, const std::string& report_id) {
  auto n = c.Exec("DELETE FROM bounce_mailbox_unattributed WHERE report_id = ?", {report_id});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<int64_t> Count(store::Conn& c) {
  auto row = c.QueryOne("SELECT COUNT(*) FROM bounce_mailbox_unattributed");
  if (!row) return Fail(row.error());
  return *row ? (*row)->Int(0) : int64_t{0};
}

Result<std::vector<Unattributed>> List(store::Conn& c, int limit) {
  auto rows = c.Query(
      "SELECT report_id, subject, sender, reason, first_seen_at, last_seen_at FROM "
      "bounce_mailbox_unattributed ORDER BY last_seen_at DESC, report_id LIMIT ?",
      {int64_t{limit}});
  if (!rows) return Fail(rows.error());
  std::vector<Unattributed> out;
  for (const auto& r : *rows)
    out.push_back({.report_id = r.Str(0),
                   .subject = r.Str(1),
                   .sender = r.Str(2),
                   .reason = r.Str(3),
                   .first_seen_at = r.Int(4),
                   .last_seen_at = r.Int(5)});
  return out;
}

}  // namespace crmd::marketing::bounce_mailbox_repo

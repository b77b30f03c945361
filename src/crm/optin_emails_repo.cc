#include "src/crm/optin_emails_repo.h"

namespace crmd::crm::optin_emails_repo {

Status Enqueue(store::Conn& c, int64_t contact_id, int64_t now) {
  auto r = c.Exec(
      "INSERT INTO optin_emails (contact_id, status, due_at, attempts, created_at) "
      "VALUES (?, 'pending', ?, 0, ?) ON CONFLICT (contact_id) DO NOTHING",
      {contact_id, now, now});
  if (!r) return Fail(r.error());
  return Ok();
}

Status Rearm(store::Conn& c, int64_t contact_id, int64_t now) {
  auto r = c.Exec(
      "INSERT INTO optin_emails (contact_id, status, due_at, attempts, created_at) "
      "VALUES (?, 'pending', ?, 0, ?) ON CONFLICT (contact_id) DO UPDATE SET status = 'pending', "
      "due_at = excluded.due_at, attempts = 0, message_id = NULL, reason = NULL, sent_at = NULL "
      "WHERE optin_emails.status <> 'pending'",
      {contact_id, now, now});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::vector<DueOptin>> Due(store::Conn& c, int64_t now, int limit) {
  auto rows = c.Query(
      "SELECT o.contact_id, o.due_at, o.attempts, k.email, k.first_name, k.last_name, k.status, "
      "EXISTS (SELECT 1 FROM contact_lists p WHERE p.contact_id = o.contact_id "
      "AND p.state = 'pending') "
      "FROM optin_emails o JOIN contacts k ON k.id = o.contact_id "
      "WHERE o.status = 'pending' AND o.due_at <= ? ORDER BY o.due_at, o.contact_id LIMIT ?" +
          store::SkipLocked(c.dialect(), "o"),
      {now, int64_t{limit}});
  if (!rows) return Fail(rows.error());
  std::vector<DueOptin> out;
  for (const auto& r : *rows)
    out.push_back({.contact_id = r.Int(0),
                   .due_at = r.Int(1),
                   .attempts = r.Int(2),
                   .email = r.Str(3),
                   .first_name = r.Str(4),
                   .last_name = r.Str(5),
                   .contact_status = r.Str(6),
                   .rejoin = r.Int(7) != 0});
  return out;
}

Result<bool> Reschedule(store::Conn& c, const DueOptin& o, int64_t due_at, int64_t attempts,
                        const std::optional<std::string>& reason) {
  auto n = c.Exec(
      "UPDATE optin_emails SET due_at = ?, attempts = ?, reason = ? "
      "WHERE contact_id = ? AND due_at = ? AND status = 'pending'",
      {due_at, attempts, store::Opt(reason), o.contact_id, o.due_at});
  if (!n) return Fail(n.error());
  return *n == 1;
}

Result<bool> Finish(store::Conn& c, const DueOptin& o, const std::string& status,
                    const std::optional<std::string>& message_id,
                    const std::optional<std::string>& reason, int64_t now) {
  auto n = c.Exec(
      "UPDATE optin_emails SET status = ?, message_id = ?, reason = ?, sent_at = ? "
      "WHERE contact_id = ? AND due_at = ? AND status = 'pending'",
      {status, store::Opt(message_id), store::Opt(reason),
       status == "sent" ? store::Value(now) : store::Null(), o.contact_id, o.due_at});
  if (!n) return Fail(n.error());
  return *n == 1;
}

}  // namespace crmd::crm::optin_emails_repo

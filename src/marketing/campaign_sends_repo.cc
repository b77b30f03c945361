#include "src/marketing/campaign_sends_repo.h"

namespace crmd::marketing::campaign_sends_repo {

using store::Value;

namespace {

// `column` is one of the fixed counter names below, never input.
Status Bump(store::Conn& c, int64_t campaign_id, const char* column, int64_t by) {
  std::string sql = std::string("INSERT INTO campaign_stats (campaign_id, ") + column +
                    ") VALUES (?, ?) ON CONFLICT (campaign_id) DO UPDATE SET " + column +
                    " = campaign_stats." + column + " + excluded." + column;
  auto r = c.Exec(sql, {campaign_id, by});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::vector<int64_t>> Ids(store::Conn& c, const std::string& sql,
                                 const std::vector<Value>& params) {
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::vector<int64_t> out;
  out.reserve(rows->size());
  for (const auto& r : *rows) out.push_back(r.Int(0));
  return out;
}

// Moves a pending row to a final state; false when it was not pending any more.
// `assignments` is a fixed ", column = ?" list whose values are `values`, in order.
Result<bool> Finalise(store::Conn& c, int64_t campaign_id, int64_t contact_id, const char* status,
                      const char* assignments, std::vector<Value> values, int64_t now) {
  std::string sql = std::string("UPDATE campaign_recipients SET status = '") + status +
                    "', updated_at = ?" + assignments +
                    " WHERE campaign_id = ? AND contact_id = ? AND status = 'pending'";
  std::vector<Value> params;
  params.reserve(values.size() + 3);
  params.emplace_back(now);
  for (auto& v : values) params.push_back(std::move(v));
  params.emplace_back(campaign_id);
  params.emplace_back(contact_id);
  auto n = c.Exec(sql, params);
  if (!n) return Fail(n.error());
  if (*n == 0) return false;
  if (auto st = Bump(c, campaign_id, status, 1); !st) return Fail(st.error());
  return true;
}

Value OptCode(int smtp_code) { return smtp_code > 0 ? Value(int64_t{smtp_code}) : store::Null(); }

}  // namespace

Result<std::vector<int64_t>> PromoteDue(store::Conn& c, int64_t now) {
  auto ids = Ids(
      c, "SELECT id FROM campaigns WHERE status = 'scheduled' AND send_at <= ? ORDER BY id", {now});
  if (!ids) return Fail(ids.error());
  for (int64_t id : *ids) {
    auto r = c.Exec(
        "UPDATE campaigns SET status = 'sending', updated_at = ?, revision = revision + 1 "
        "WHERE id = ? AND status = 'scheduled'",
        {now, id});
    if (!r) return Fail(r.error());
    if (auto st = Unpark(c, id); !st) return Fail(st.error());
  }
  return ids;
}

Result<std::vector<int64_t>> FinishDrained(store::Conn& c, int64_t now) {
  auto ids = Ids(c,
                 "SELECT k.id FROM campaigns k WHERE k.status = 'sending' AND NOT EXISTS ("
                 "SELECT 1 FROM campaign_recipients r WHERE r.campaign_id = k.id "
                 "AND r.status = 'pending') ORDER BY k.id",
                 {});
  if (!ids) return Fail(ids.error());
  for (int64_t id : *ids) {
    auto r = c.Exec(
        "UPDATE campaigns SET status = 'sent', finished_at = ?, updated_at = ?, "
        "revision = revision + 1 WHERE id = ? AND status = 'sending'",
        {now, now, id});
    if (!r) return Fail(r.error());
  }
  return ids;
}

Status Park(store::Conn& c, int64_t campaign_id, int64_t now) {
  auto n = c.Exec(
      "UPDATE campaign_recipients SET due_at = ? WHERE campaign_id = ? AND status = 'pending' "
      "AND due_at <= ?",
      {kParkedDueAt, campaign_id, now});
  if (!n) return Fail(n.error());
  return Ok();
}

Status Unpark(store::Conn& c, int64_t campaign_id) {
  auto n = c.Exec(
      "UPDATE campaign_recipients SET due_at = 0 WHERE campaign_id = ? AND status = 'pending' "
      "AND due_at = ?",
      {campaign_id, kParkedDueAt});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<bool> Suspend(store::Conn& c, int64_t campaign_id, int64_t now) {
  auto n = c.Exec(
      "UPDATE campaigns SET status = 'paused', updated_at = ?, revision = revision + 1 "
      "WHERE id = ? AND status = 'sending'",
      {now, campaign_id});
  if (!n) return Fail(n.error());
  if (*n == 0) return false;
  if (auto st = Park(c, campaign_id, now); !st) return Fail(st.error());
  return true;
}

Result<store::QueueStats> QueueStats(store::Conn& c, int64_t now) {
  auto pending = c.QueryOne("SELECT COUNT(*) FROM campaign_recipients WHERE status = 'pending'");
  if (!pending) return Fail(pending.error());
  auto due = c.QueryOne(
      "SELECT COUNT(*), MIN(r.due_at) FROM campaign_recipients r "
      "JOIN campaigns k ON k.id = r.campaign_id "
      "WHERE r.status = 'pending' AND r.due_at <= ? AND k.status = 'sending'",
      {now});
  if (!due) return Fail(due.error());
  store::QueueStats s{.pending = (*pending)->Int(0), .due = (*due)->Int(0)};
  if (s.due > 0) s.oldest_due_at = (*due)->Int(1);
  return s;
}

Result<std::vector<int64_t>> PendingCampaignsOfContact(store::Conn& c, int64_t contact_id) {
  return Ids(c,
             "SELECT campaign_id FROM campaign_recipients WHERE contact_id = ? AND "
             "status = 'pending'",
             {contact_id});
}

Result<int64_t> SkipPendingOfContact(store::Conn& c, int64_t contact_id) {
  auto ids = PendingCampaignsOfContact(c, contact_id);
  if (!ids) return Fail(ids.error());
  for (int64_t id : *ids)
    if (auto st = Bump(c, id, "skipped", 1); !st) return Fail(st.error());
  return static_cast<int64_t>(ids->size());
}

Result<std::vector<QueuedRecipient>> LeaseDue(store::Conn& c, int64_t now, int64_t lease_s,
                                              int limit) {
  auto rows = c.Query(
      "SELECT r.campaign_id, r.contact_id, r.round, r.attempts, ct.email, ct.first_name, "
      "ct.last_name, ct.phone, ct.custom_fields, ct.status, k.traceparent, k.tracestate "
      "FROM campaign_recipients r JOIN campaigns k ON k.id = r.campaign_id "
      "JOIN contacts ct ON ct.id = r.contact_id "
      "WHERE r.status = 'pending' AND r.due_at <= ? AND k.status = 'sending' "
      "ORDER BY r.due_at, r.campaign_id, r.contact_id LIMIT ?" +
          store::SkipLocked(c.dialect(), "r"),
      {now, int64_t{limit}});
  if (!rows) return Fail(rows.error());
  std::vector<QueuedRecipient> out;
  out.reserve(rows->size());
  for (const auto& r : *rows) {
    QueuedRecipient q{.campaign_id = r.Int(0),
                      .contact_id = r.Int(1),
                      .round = r.Int(2),
                      .attempts = r.Int(3),
                      .lease_until = now + lease_s,
                      .email = r.Str(4),
                      .first_name = r.Str(5),
                      .last_name = r.Str(6),
                      .phone = r.Str(7),
                      .custom_fields_json = r.Str(8),
                      .contact_status = r.Str(9),
                      .traceparent = r.Str(10),
                      .tracestate = r.Str(11)};
    auto upd = c.Exec(
        "UPDATE campaign_recipients SET due_at = ?, attempts = attempts + 1 "
        "WHERE campaign_id = ? AND contact_id = ? AND status = 'pending'",
        {now + lease_s, q.campaign_id, q.contact_id});
    if (!upd) return Fail(upd.error());
    out.push_back(std::move(q));
  }
  return out;
}

Status SetTrace(store::Conn& c, int64_t campaign_id, const crm::TraceLink& trace) {
  auto n = c.Exec("UPDATE campaigns SET traceparent = ?, tracestate = ? WHERE id = ?",
                  {store::Opt(trace.traceparent), store::Opt(trace.tracestate), campaign_id});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<bool> MarkSent(store::Conn& c, int64_t campaign_id, int64_t contact_id,
                      const std::string& message_id, int64_t now) {
  std::vector<Value> values;
  values.emplace_back(message_id);
  values.emplace_back(now);
  return Finalise(c, campaign_id, contact_id, "sent",
                  ", message_id = ?, sent_at = ?, reason = NULL, smtp_code = NULL",
                  std::move(values), now);
}

Result<bool> MarkFailed(store::Conn& c, int64_t campaign_id, int64_t contact_id,
                        const std::string& reason, int smtp_code, int64_t now) {
  std::vector<Value> values;
  values.emplace_back(reason);
  values.push_back(OptCode(smtp_code));
  return Finalise(c, campaign_id, contact_id, "failed", ", reason = ?, smtp_code = ?",
                  std::move(values), now);
}

Result<bool> MarkSkipped(store::Conn& c, int64_t campaign_id, int64_t contact_id,
                         const std::string& reason, int64_t now) {
  std::vector<Value> values;
  values.emplace_back(reason);
  return Finalise(c, campaign_id, contact_id, "skipped", ", reason = ?", std::move(values), now);
}

Status Retry(store::Conn& c, int64_t campaign_id, int64_t contact_id, int64_t lease_until,
             const std::string& reason, int smtp_code, int64_t due_at, int64_t now) {
  auto r = c.Exec(
      "UPDATE campaign_recipients SET due_at = ?, reason = ?, smtp_code = ?, updated_at = ? "
      "WHERE campaign_id = ? AND contact_id = ? AND status = 'pending' AND due_at = ?",
      {due_at, reason, OptCode(smtp_code), now, campaign_id, contact_id, lease_until});
  if (!r) return Fail(r.error());
  return Ok();
}

Status Release(store::Conn& c, int64_t campaign_id, int64_t contact_id, int64_t lease_until,
               int64_t due_at) {
  auto r = c.Exec(
      "UPDATE campaign_recipients SET due_at = ?, attempts = CASE WHEN attempts > 0 "
      "THEN attempts - 1 ELSE 0 END WHERE campaign_id = ? AND contact_id = ? "
      "AND status = 'pending' AND due_at = ?",
      {due_at, campaign_id, contact_id, lease_until});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<bool> MarkEvent(store::Conn& c, int64_t campaign_id, int64_t contact_id,
                       const std::string& kind, int64_t now) {
  const char* column = nullptr;
  for (const char* k : {"bounced", "complained", "unsubscribed", "opened", "clicked"})
    if (kind == k) column = k;
  if (!column) return Fail(Errc::kInvalidArgument, "unknown delivery event " + kind);
  std::string at = std::string(column) + "_at";
  auto n = c.Exec("UPDATE campaign_recipients SET " + at +
                      " = ? WHERE campaign_id = ? AND "
                      "contact_id = ? AND " +
                      at + " IS NULL",
                  {now, campaign_id, contact_id});
  if (!n) return Fail(n.error());
  if (*n == 0) return false;
  if (auto st = Bump(c, campaign_id, column, 1); !st) return Fail(st.error());
  if (kind == "bounced") {
    // A refusal at RCPT (the recipient is failed) bounces a message that was never sent;
    // a bounce report after the relay accepted one bounces a sent message. The report
    // takes only the second kind off the delivered.
    auto row = c.QueryOne(
        "SELECT status FROM campaign_recipients WHERE campaign_id = ? AND contact_id = ?",
        {campaign_id, contact_id});
    if (!row) return Fail(row.error());
    if (*row && (*row)->Str(0) != "sent")
      if (auto st = Bump(c, campaign_id, "bounced_unsent", 1); !st) return Fail(st.error());
  }
  return true;
}

Result<std::optional<int64_t>> LastCampaignFor(store::Conn& c, int64_t contact_id) {
  auto row = c.QueryOne(
      "SELECT campaign_id FROM campaign_recipients WHERE contact_id = ? AND status = 'sent' "
      "ORDER BY sent_at DESC, campaign_id DESC LIMIT 1",
      {contact_id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<int64_t>();
  return std::optional<int64_t>((*row)->Int(0));
}

Result<std::optional<std::pair<int64_t, int64_t>>> FindByMessageId(store::Conn& c,
                                                                   const std::string& message_id) {
  auto row = c.QueryOne(
      "SELECT campaign_id, contact_id FROM campaign_recipients WHERE message_id = ?", {message_id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<std::pair<int64_t, int64_t>>();
  return std::optional<std::pair<int64_t, int64_t>>(std::pair{(*row)->Int(0), (*row)->Int(1)});
}

Result<std::optional<SentMessage>> MessageOf(store::Conn& c, int64_t campaign_id,
                                             int64_t contact_id) {
  auto row = c.QueryOne(
      "SELECT ct.email, r.message_id FROM campaign_recipients r JOIN contacts ct ON ct.id = "
      "r.contact_id WHERE r.campaign_id = ? AND r.contact_id = ?",
      {campaign_id, contact_id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<SentMessage>();
  return std::optional<SentMessage>(
      SentMessage{.email = (*row)->Str(0), .message_id = (*row)->OptStr(1)});
}

Result<Stats> LoadStats(store::Conn& c, int64_t campaign_id) {
  auto row = c.QueryOne(
      "SELECT queued, sent, failed, skipped, bounced, complained, unsubscribed, opened, "
      "clicked, bounced_unsent FROM campaign_stats WHERE campaign_id = ?",
      {campaign_id});
  if (!row) return Fail(row.error());
  Stats s;
  if (!*row) return s;
  const auto& r = **row;
  s.queued = r.Int(0);
  s.sent = r.Int(1);
  s.failed = r.Int(2);
  s.skipped = r.Int(3);
  s.bounced = r.Int(4);
  s.complained = r.Int(5);
  s.unsubscribed = r.Int(6);
  s.opened = r.Int(7);
  s.clicked = r.Int(8);
  s.bounced_unsent = r.Int(9);
  return s;
}

Status AddQueued(store::Conn& c, int64_t campaign_id, int64_t n) {
  return Bump(c, campaign_id, "queued", n);
}

Result<std::vector<RecipientRow>> ListRecipients(store::Conn& c, int64_t campaign_id,
                                                 const std::string& status,
                                                 int64_t after_contact_id, int limit) {
  std::string sql =
      "SELECT r.contact_id, ct.email, r.status, r.reason, r.attempts, r.round, r.smtp_code, "
      "r.sent_at, r.opened_at, r.clicked_at, r.bounced_at, r.complained_at, r.unsubscribed_at, "
      "r.message_id, r.updated_at FROM campaign_recipients r "
      "JOIN contacts ct ON ct.id = r.contact_id WHERE r.campaign_id = ? AND r.contact_id > ?";
  std::vector<Value> params{campaign_id, after_contact_id};
  if (!status.empty()) {
    sql += " AND r.status = ?";
    params.push_back(status);
  }
  sql += " ORDER BY r.contact_id LIMIT ?";
  params.push_back(int64_t{limit} + 1);
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::vector<RecipientRow> out;
  out.reserve(rows->size());
  for (const auto& r : *rows) {
    out.push_back(RecipientRow{.contact_id = r.Int(0),
                               .email = r.Str(1),
                               .status = r.Str(2),
                               .reason = r.OptStr(3),
                               .attempts = r.Int(4),
                               .round = r.Int(5),
                               .smtp_code = r.OptInt(6),
                               .sent_at = r.OptInt(7),
                               .opened_at = r.OptInt(8),
                               .clicked_at = r.OptInt(9),
                               .bounced_at = r.OptInt(10),
                               .complained_at = r.OptInt(11),
                               .unsubscribed_at = r.OptInt(12),
                               .message_id = r.OptStr(13),
                               .updated_at = r.Int(14)});
  }
  return out;
}

Result<int64_t> CountResendable(store::Conn& c, int64_t campaign_id) {
  auto row = c.QueryOne(
      "SELECT COUNT(*) FROM campaign_recipients r JOIN contacts ct ON ct.id = r.contact_id "
      "WHERE r.campaign_id = ? AND r.status = 'failed' AND ct.status = 'subscribed'",
      {campaign_id});
  if (!row) return Fail(row.error());
  return (*row)->Int(0);
}

Result<int64_t> RequeueFailed(store::Conn& c, int64_t campaign_id, int64_t round, int64_t now) {
  auto n = c.Exec(
      "UPDATE campaign_recipients SET status = 'pending', round = ?, due_at = 0, attempts = 0, "
      "reason = NULL, smtp_code = NULL, updated_at = ? WHERE campaign_id = ? AND status = 'failed' "
      "AND contact_id IN (SELECT id FROM contacts WHERE status = 'subscribed')",
      {round, now, campaign_id});
  if (!n) return Fail(n.error());
  if (*n > 0)
    if (auto st = Bump(c, campaign_id, "failed", -*n); !st) return Fail(st.error());
  return *n;
}

}  // namespace crmd::marketing::campaign_sends_repo

#include "src/marketing/mail_receivers_repo.h"

namespace crmd::marketing::mail_receivers_repo {
namespace {

constexpr const char* kColumns =
    "provider, signing_key, username, password_hash, enabled, received_count, created_at, "
    "updated_at, last_received_at, topic_arn";

Row ReceiverFromRow(const store::Row& r) {
  return Row{.provider = r.Str(0),
             .signing_key = r.OptStr(1),
             .username = r.OptStr(2),
             .password_hash = r.OptStr(3),
             .enabled = r.Int(4) != 0,
             .received_count = r.Int(5),
             .created_at = r.Int(6),
             .updated_at = r.Int(7),
             .last_received_at = r.OptInt(8),
             .topic_arn = r.OptStr(9)};
}

}  // namespace

Result<std::vector<Row>> List(store::Conn& c) {
  auto rows = c.Query(std::string("SELECT ") + kColumns + " FROM mail_receivers ORDER BY provider");
  if (!rows) return Fail(rows.error());
  std::vector<Row> out;
  for (const auto& r : *rows) out.push_back(ReceiverFromRow(r));
  return out;
}

Result<std::optional<Row>> Find(store::Conn& c, const std::string& provider) {
  auto row = c.QueryOne(
      std::string("SELECT ") + kColumns + " FROM mail_receivers WHERE provider = ?", {provider});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Row>();
  return std::optional<Row>(ReceiverFromRow(**row));
}

Status Save(store::Conn& c, const Row& r) {
  auto n = c.Exec(
      "INSERT INTO mail_receivers (provider, signing_key, username, password_hash, topic_arn, "
      "enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (provider) "
      "DO UPDATE SET signing_key = excluded.signing_key, username = excluded.username, "
      "password_hash = excluded.password_hash, topic_arn = excluded.topic_arn, "
      "enabled = excluded.enabled, updated_at = excluded.updated_at",
      {r.provider, store::Opt(r.signing_key), store::Opt(r.username), store::Opt(r.password_hash),
       store::Opt(r.topic_arn), int64_t{r.enabled ? 1 : 0}, r.created_at, r.updated_at});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<bool> Delete(store::Conn& c, const std::string& provider) {
  auto n = c.Exec("DELETE FROM mail_receivers WHERE provider = ?", {provider});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Status CountReceived(store::Conn& c, const std::string& provider, int64_t now) {
  auto n = c.Exec(
      "UPDATE mail_receivers SET received_count = received_count + 1, last_received_at = ? "
      "WHERE provider = ?",
      {now, provider});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<bool> MarkProcessed(store::Conn& c, const std::string& provider, const std::string& event_id,
                           int64_t now) {
  auto n = c.Exec(
      "INSERT INTO mail_receiver_events (provider, event_id, received_at) VALUES (?, ?, ?) "
      "ON CONFLICT (provider, event_id) DO NOTHING",
      {provider, event_id, now});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Status Prune(store::Conn& c, int64_t before) {
  auto n = c.Exec("DELETE FROM mail_receiver_events WHERE received_at < ?", {before});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<int64_t> CountSoftBounce(store::Conn& c, int64_t contact_id, int64_t now, int64_t window_s) {
  const int64_t window_from = now - window_s;
  auto n = c.Exec(
      "INSERT INTO contact_soft_bounces (contact_id, bounces, last_at, window_start) "
      "VALUES (?, 1, ?, ?) ON CONFLICT (contact_id) DO UPDATE SET "
      "bounces = CASE WHEN contact_soft_bounces.window_start < ? THEN 1 "
      "ELSE contact_soft_bounces.bounces + 1 END, "
      "window_start = CASE WHEN contact_soft_bounces.window_start < ? "
      "THEN excluded.window_start ELSE contact_soft_bounces.window_start END, "
      "last_at = excluded.last_at",
      {contact_id, now, now, window_from, window_from});
  if (!n) return Fail(n.error());
  auto row =
      c.QueryOne("SELECT bounces FROM contact_soft_bounces WHERE contact_id = ?", {contact_id});
  if (!row) return Fail(row.error());
  return *row ? (*row)->Int(0) : int64_t{0};
}

}  // namespace crmd::marketing::mail_receivers_repo

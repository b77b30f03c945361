#include "src/crm/contact_records_repo.h"

namespace crmd::crm::contact_records_repo {

Result<std::vector<ListMembership>> Lists(store::Conn& c, int64_t contact_id) {
  auto rows = c.Query(
      "SELECT l.id, l.name, m.state, m.created_at, m.updated_at FROM contact_lists m "
      "JOIN lists l ON l.id = m.list_id WHERE m.contact_id = ? ORDER BY l.name",
      {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<ListMembership> out;
  for (const auto& r : *rows)
    out.push_back({.list_id = r.Int(0),
                   .name = r.Str(1),
                   .state = r.Str(2),
                   .since = r.Int(3),
                   .updated_at = r.OptInt(4)});
  return out;
}

Result<std::vector<TagMembership>> Tags(store::Conn& c, int64_t contact_id) {
  auto rows = c.Query(
      "SELECT t.id, t.name, m.created_at FROM contact_tags m JOIN tags t ON t.id = m.tag_id "
      "WHERE m.contact_id = ? ORDER BY t.name",
      {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<TagMembership> out;
  for (const auto& r : *rows)
    out.push_back({.tag_id = r.Int(0), .name = r.Str(1), .since = r.Int(2)});
  return out;
}

Result<std::vector<ContactEvent>> ContactEvents(store::Conn& c, int64_t contact_id) {
  auto rows = c.Query(
      "SELECT id, event_type, data, occurred_at FROM outbox_events WHERE contact_id = ? "
      "ORDER BY id",
      {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<ContactEvent> out;
  for (auto& r : *rows)
    out.push_back(
        {.id = r.Int(0), .type = r.Str(1), .data = r.TakeStr(2), .occurred_at = r.Int(3)});
  return out;
}

Result<std::optional<OptinEmail>> Optin(store::Conn& c, int64_t contact_id) {
  auto row = c.QueryOne(
      "SELECT status, message_id, reason, created_at, sent_at FROM optin_emails "
      "WHERE contact_id = ?",
      {contact_id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<OptinEmail>{};
  const auto& r = **row;
  return std::optional<OptinEmail>(OptinEmail{.status = r.Str(0),
                                              .message_id = r.OptStr(1),
                                              .reason = r.OptStr(2),
                                              .created_at = r.Int(3),
                                              .sent_at = r.OptInt(4)});
}

}  // namespace crmd::crm::contact_records_repo

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
      // The email.* events repeat what the messages and their engagement already show.
      "SELECT id, event_type, data, occurred_at FROM outbox_events WHERE contact_id = ? "
      "AND event_type NOT LIKE 'email.%' ORDER BY id",
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

Result<std::vector<ConsentRecord>> ConsentRecords(store::Conn& c, int64_t contact_id) {
  auto rows = c.Query(
      "SELECT id, kind, form_id, ip_address, user_agent, created_at FROM consent_records "
      "WHERE contact_id = ? ORDER BY id",
      {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<ConsentRecord> out;
  for (const auto& r : *rows)
    out.push_back({.id = r.Int(0),
                   .kind = r.Str(1),
                   .form_id = r.OptInt(2),
                   .ip_address = r.Str(3),
                   .user_agent = r.Str(4),
                   .at = r.Int(5)});
  return out;
}

Status AddConsentRecord(store::Conn& c, int64_t contact_id, std::string_view kind,
                        std::optional<int64_t> form_id, std::string_view ip_address,
                        std::string_view user_agent, int64_t now) {
  constexpr size_t kMaxUserAgent = 512;
  std::string ua(user_agent.substr(0, kMaxUserAgent));
  if (user_agent.size() > kMaxUserAgent) {  // no cut UTF-8 sequence at the end
    while (!ua.empty() && (static_cast<unsigned char>(ua.back()) & 0xC0) == 0x80) ua.pop_back();
    if (!ua.empty() && static_cast<unsigned char>(ua.back()) >= 0xC0) ua.pop_back();
  }
  auto n = c.Exec(
      "INSERT INTO consent_records (contact_id, kind, form_id, ip_address, user_agent, "
      "created_at) VALUES (?, ?, ?, ?, ?, ?)",
      {contact_id, std::string(kind), form_id ? store::Value(*form_id) : store::Value(nullptr),
       std::string(ip_address), std::move(ua), now});
  if (!n) return Fail(n.error());
  return Ok();
}

}  // namespace crmd::crm::contact_records_repo

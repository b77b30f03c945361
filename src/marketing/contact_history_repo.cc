#include "src/marketing/contact_history_repo.h"

namespace crmd::marketing::contact_history_repo {

Result<std::vector<CampaignMessage>> CampaignMessages(store::Conn& c, int64_t contact_id) {
  auto rows = c.Query(
      "SELECT r.campaign_id, k.name, k.subject, r.status, r.reason, r.message_id, r.round, "
      "r.sent_at, r.opened_at, r.clicked_at, r.bounced_at, r.complained_at, r.unsubscribed_at, "
      "r.updated_at FROM campaign_recipients r JOIN campaigns k ON k.id = r.campaign_id "
      "WHERE r.contact_id = ? ORDER BY r.campaign_id",
      {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<CampaignMessage> out;
  for (const auto& r : *rows)
    out.push_back({.campaign_id = r.Int(0),
                   .campaign_name = r.Str(1),
                   .subject = r.Str(2),
                   .status = r.Str(3),
                   .reason = r.OptStr(4),
                   .message_id = r.OptStr(5),
                   .round = r.Int(6),
                   .sent_at = r.OptInt(7),
                   .opened_at = r.OptInt(8),
                   .clicked_at = r.OptInt(9),
                   .bounced_at = r.OptInt(10),
                   .complained_at = r.OptInt(11),
                   .unsubscribed_at = r.OptInt(12),
                   .updated_at = r.Int(13)});
  return out;
}

Result<std::vector<RunMessage>> RunMessages(store::Conn& c, int64_t contact_id) {
  auto rows = c.Query(
      "SELECT m.id, m.source, m.owner_id, COALESCE(a.name, q.name, ''), m.step, m.subject, "
      "m.message_id, m.outcome, m.detail, m.created_at FROM run_messages m "
      "LEFT JOIN automations a ON m.source = 'automation' AND a.id = m.owner_id "
      "LEFT JOIN sequences q ON m.source = 'sequence' AND q.id = m.owner_id "
      "WHERE m.contact_id = ? ORDER BY m.id",
      {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<RunMessage> out;
  for (const auto& r : *rows)
    out.push_back({.id = r.Int(0),
                   .source = r.Str(1),
                   .owner_id = r.Int(2),
                   .owner_name = r.Str(3),
                   .step = r.Int(4),
                   .subject = r.Str(5),
                   .message_id = r.OptStr(6),
                   .outcome = r.Str(7),
                   .detail = r.OptStr(8),
                   .at = r.Int(9)});
  return out;
}

Result<std::vector<Enrolment>> AutomationRuns(store::Conn& c, int64_t contact_id) {
  auto rows = c.Query(
      "SELECT r.id, r.automation_id, a.name, r.status, r.current_step, r.steps, r.last_error, "
      "r.enrolled_at, r.updated_at FROM automation_runs r "
      "JOIN automations a ON a.id = r.automation_id WHERE r.contact_id = ? ORDER BY r.id",
      {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<Enrolment> out;
  for (auto& r : *rows)
    out.push_back({.id = r.Int(0),
                   .owner_id = r.Int(1),
                   .name = r.Str(2),
                   .status = r.Str(3),
                   .position = r.Int(4),
                   .steps = r.TakeStr(5),
                   .last_error = r.OptStr(6),
                   .enrolled_at = r.Int(7),
                   .updated_at = r.Int(8)});
  return out;
}

Result<std::vector<Enrolment>> SequenceRuns(store::Conn& c, int64_t contact_id) {
  auto rows = c.Query(
      "SELECT r.id, r.sequence_id, q.name, r.status, r.next_email, r.last_error, r.enrolled_at, "
      "r.updated_at FROM sequence_runs r JOIN sequences q ON q.id = r.sequence_id "
      "WHERE r.contact_id = ? ORDER BY r.id",
      {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<Enrolment> out;
  for (const auto& r : *rows)
    out.push_back({.id = r.Int(0),
                   .owner_id = r.Int(1),
                   .name = r.Str(2),
                   .status = r.Str(3),
                   .position = r.Int(4),
                   .last_error = r.OptStr(5),
                   .enrolled_at = r.Int(6),
                   .updated_at = r.Int(7)});
  return out;
}

}  // namespace crmd::marketing::contact_history_repo

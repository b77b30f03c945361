#include "src/marketing/presend_repo.h"

#include "src/marketing/campaigns_repo.h"

namespace crmd::marketing::presend_repo {

Result<std::vector<AudienceMember>> SampleMembers(store::Conn& c, int64_t campaign_id, int n) {
  auto ids = campaigns_repo::SampleAudience(c, campaign_id, n);
  if (!ids) return Fail(ids.error());
  std::vector<AudienceMember> out;
  if (ids->empty()) return out;
  std::string sql =
      "SELECT k.email, k.first_name, k.last_name, k.phone, k.custom_fields,"
      " CASE WHEN EXISTS (SELECT 1 FROM consent_records r WHERE r.contact_id = k.id"
      "  AND r.kind = 'optin_confirmation') THEN 1 ELSE 0 END,"
      " (SELECT MAX(CASE WHEN s.clicked_at IS NOT NULL AND (s.opened_at IS NULL OR"
      "  s.clicked_at > s.opened_at) THEN s.clicked_at ELSE s.opened_at END)"
      "  FROM campaign_recipients s WHERE s.contact_id = k.id)"
      " FROM contacts k WHERE k.id IN (";
  std::vector<store::Value> params;
  for (size_t i = 0; i < ids->size(); ++i) {
    sql += i ? ",?" : "?";
    params.emplace_back((*ids)[i]);
  }
  sql += ") ORDER BY k.id";
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  out.reserve(rows->size());
  for (auto& r : *rows) {
    AudienceMember m;
    m.fields = {.email = r.TakeStr(0),
                .first_name = r.TakeStr(1),
                .last_name = r.TakeStr(2),
                .phone = r.TakeStr(3),
                .custom_fields_json = r.IsNull(4) ? "{}" : r.TakeStr(4)};
    m.confirmed = r.Int(5) != 0;
    m.last_engaged_at = r.OptInt(6);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace crmd::marketing::presend_repo

#include "src/marketing/campaigns_repo.h"

#include <initializer_list>
#include <string>
#include <string_view>

#include "src/marketing/templates_repo.h"

namespace crmd::marketing::campaigns_repo {
namespace {

using store::Value;

constexpr const char* kCampaignColumns =
    "id, name, subject, preheader, from_name, from_email, html_body, text_body, send_at, "
    "status, audience_size, activated_at, revision, created_at, updated_at, track_opens, "
    "track_clicks, send_round, finished_at, template_id";

Campaign CampaignFromRow(const store::Row& r) {
  Campaign c;
  c.id = r.Int(0);
  c.name = r.Str(1);
  c.subject = r.Str(2);
  c.preheader = r.Str(3);
  c.from_name = r.Str(4);
  c.from_email = r.Str(5);
  c.html_body = r.Str(6);
  c.text_body = r.Str(7);
  c.send_at = r.OptInt(8);
  c.status = ParseCampaignStatus(r.Str(9)).value_or(CampaignStatus::kDraft);
  c.audience_size = r.Int(10);
  c.activated_at = r.OptInt(11);
  c.revision = r.Int(12);
  c.created_at = r.Int(13);
  c.updated_at = r.Int(14);
  c.track_opens = r.Int(15) != 0;
  c.track_clicks = r.Int(16) != 0;
  c.send_round = r.Int(17);
  c.finished_at = r.OptInt(18);
  c.template_id = r.OptInt(19);
  return c;
}

Status LoadAudience(store::Conn& c, Campaign& campaign) {
  auto rows = c.Query(
      "SELECT kind, ref_id, mode FROM campaign_audience WHERE campaign_id = ? "
      "ORDER BY kind, mode, ref_id",
      {campaign.id});
  if (!rows) return Fail(rows.error());
  campaign.audience = {};
  for (const auto& r : *rows) {
    bool list = r.Str(0) == "list";
    bool exclude = r.Str(2) == "exclude";
    auto& v = list ? (exclude ? campaign.audience.exclude_lists : campaign.audience.lists)
                   : (exclude ? campaign.audience.exclude_tags : campaign.audience.tags);
    v.push_back(r.Int(1));
  }
  return Ok();
}

Status SaveAudience(store::Conn& c, const Campaign& campaign) {
  if (auto r = c.Exec("DELETE FROM campaign_audience WHERE campaign_id = ?", {campaign.id}); !r) {
    return Fail(r.error());
  }
  auto add = [&](const std::vector<int64_t>& ids, const char* kind, const char* mode) -> Status {
    for (int64_t id : ids) {
      auto r = c.Exec(
          "INSERT INTO campaign_audience (campaign_id, kind, ref_id, mode) VALUES (?, ?, ?, ?)",
          {campaign.id, std::string(kind), id, std::string(mode)});
      if (!r) return Fail(r.error());
    }
    return Ok();
  };
  const Audience& a = campaign.audience;
  if (auto s = add(a.lists, "list", "include"); !s) return s;
  if (auto s = add(a.tags, "tag", "include"); !s) return s;
  if (auto s = add(a.exclude_lists, "list", "exclude"); !s) return s;
  return add(a.exclude_tags, "tag", "exclude");
}

// The audience as a subquery of contact ids; its parameters are the campaign id four times.
// Contacts come from the membership tables through their (list_id / tag_id) indexes, so the
// work is proportional to the audience, not to the whole contact table.
constexpr const char* kAudienceIds =
    "SELECT c.id FROM contacts c WHERE c.status = ? AND c.id IN ("
    "  SELECT cl.contact_id FROM contact_lists cl JOIN campaign_audience a"
    "    ON a.kind = 'list' AND a.mode = 'include' AND a.ref_id = cl.list_id"
    "    WHERE a.campaign_id = ? AND cl.state = 'subscribed'"
    "  UNION"
    "  SELECT ct.contact_id FROM contact_tags ct JOIN campaign_audience a"
    "    ON a.kind = 'tag' AND a.mode = 'include' AND a.ref_id = ct.tag_id"
    "    WHERE a.campaign_id = ?)"
    " AND NOT EXISTS (SELECT 1 FROM contact_lists xl JOIN campaign_audience a"
    "    ON a.kind = 'list' AND a.mode = 'exclude' AND a.ref_id = xl.list_id"
    "    WHERE a.campaign_id = ? AND xl.contact_id = c.id AND xl.state = 'subscribed')"
    " AND NOT EXISTS (SELECT 1 FROM contact_tags xt JOIN campaign_audience a"
    "    ON a.kind = 'tag' AND a.mode = 'exclude' AND a.ref_id = xt.tag_id"
    "    WHERE a.campaign_id = ? AND xt.contact_id = c.id)";

std::vector<Value> AudienceParams(int64_t id) {
  return {std::string(kSubscribedStatus), id, id, id, id};
}

// SQL text from fixed pieces, appended into one string. (GCC 12 at -O2 warns, falsely, of
// an out-of-bounds copy in the inlined `std::string("...") + piece`.)
std::string Sql(std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (auto piece : pieces) out.append(piece);
  return out;
}

}  // namespace

Result<int64_t> Insert(store::Conn& c, const Campaign& k) {
  auto id = c.InsertReturningId(
      "INSERT INTO campaigns (id, name, subject, preheader, from_name, from_email, html_body, "
      "text_body, send_at, status, revision, created_at, updated_at, track_opens, track_clicks, "
      "template_id) VALUES (" +
          store::NextIdSql("campaigns") +
          ", ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?) RETURNING id",
      {k.name, k.subject, k.preheader, k.from_name, k.from_email, k.html_body, k.text_body,
       store::Opt(k.send_at), std::string(ToString(k.status)), k.created_at, k.updated_at,
       int64_t{k.track_opens}, int64_t{k.track_clicks}, store::Opt(k.template_id)});
  if (!id) return Fail(id.error());
  Campaign saved = k;
  saved.id = *id;
  if (auto s = SaveAudience(c, saved); !s) return Fail(s.error());
  return *id;
}

Result<std::optional<Campaign>> Load(store::Conn& c, int64_t id) {
  auto row = c.QueryOne(Sql({"SELECT ", kCampaignColumns, " FROM campaigns WHERE id = ?"}), {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Campaign>{};
  Campaign k = CampaignFromRow(**row);
  if (auto s = LoadAudience(c, k); !s) return Fail(s.error());
  if (k.template_id) {
    auto t = templates_repo::Find(c, *k.template_id);
    if (!t) return Fail(t.error());
    if (*t) {
      ResolveBuiltin(**t);
      k.layout = std::move(**t);
    }
  }
  return std::optional<Campaign>(std::move(k));
}

Status Save(store::Conn& c, Campaign& k, int64_t expected_revision) {
  auto n = c.Exec(
      "UPDATE campaigns SET name = ?, subject = ?, preheader = ?, from_name = ?, from_email = ?, "
      "html_body = ?, text_body = ?, send_at = ?, status = ?, audience_size = ?, activated_at = ?, "
      "track_opens = ?, track_clicks = ?, send_round = ?, finished_at = ?, template_id = ?, "
      "revision = revision + 1, updated_at = ? WHERE id = ? AND revision = ?",
      {k.name, k.subject, k.preheader, k.from_name, k.from_email, k.html_body, k.text_body,
       store::Opt(k.send_at), std::string(ToString(k.status)), k.audience_size,
       store::Opt(k.activated_at), int64_t{k.track_opens}, int64_t{k.track_clicks}, k.send_round,
       store::Opt(k.finished_at), store::Opt(k.template_id), k.updated_at, k.id,
       expected_revision});
  if (!n) return Fail(n.error());
  if (*n == 0) return Fail(Errc::kRevisionConflict, "the campaign was changed by someone else");
  k.revision = expected_revision + 1;
  return SaveAudience(c, k);
}

Result<std::vector<Campaign>> List(store::Conn& c, std::optional<CampaignStatus> status,
                                   int64_t after_id, int limit) {
  std::string sql = Sql({"SELECT ", kCampaignColumns, " FROM campaigns WHERE id > ?"});
  std::vector<Value> params{after_id};
  if (status) {
    sql += " AND status = ?";
    params.emplace_back(std::string(ToString(*status)));
  }
  sql += " ORDER BY id LIMIT ?";
  params.emplace_back(static_cast<int64_t>(limit + 1));
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::vector<Campaign> out;
  // Compact rows: the audience is not loaded (list results do not show it).
  for (const auto& r : *rows) out.push_back(CampaignFromRow(r));
  return out;
}

Status Remove(store::Conn& c, int64_t id) {
  auto n = c.Exec("DELETE FROM campaigns WHERE id = ?", {id});
  if (!n) return Fail(n.error());
  if (*n == 0) return Fail(Error::NotFound("campaign not found"));
  return Ok();
}

Result<int64_t> CountAudience(store::Conn& c, int64_t campaign_id) {
  // One included list or tag (the usual audience): its subscribed members are a counter
  // kept by triggers (group_member_counts, migration 0053). Those of them in an excluded
  // group are then counted by walking the excluded groups' members, when those are fewer
  // than the included group's. Any other audience is resolved.
  auto parts = c.Query("SELECT kind, ref_id, mode FROM campaign_audience WHERE campaign_id = ?",
                       {campaign_id});
  if (!parts) return Fail(parts.error());
  if (parts->empty()) return 0;
  const store::Row* include = nullptr;
  int includes = 0;
  for (const auto& r : *parts)
    if (r.Str(2) == "include" && ++includes == 1) include = &r;
  if (includes == 1) {
    const bool list = include->Str(0) == "list";
    const int64_t group = include->Int(1);
    auto sizes = c.QueryOne(
        "SELECT COALESCE(SUM(CASE WHEN g.status = ? THEN g.n ELSE 0 END), 0), "
        "COALESCE(SUM(g.n), 0) FROM group_member_counts g WHERE g.kind = ? AND g.group_id = ?",
        {std::string(kSubscribedStatus), include->Str(0), group});
    if (!sizes) return Fail(sizes.error());
    const int64_t subscribed = (*sizes)->Int(0), members = (*sizes)->Int(1);
    if (parts->size() == 1) return subscribed;
    auto excluded = c.QueryOne(
        "SELECT COALESCE(SUM(g.n), 0) FROM group_member_counts g JOIN campaign_audience a "
        "ON a.kind = g.kind AND a.ref_id = g.group_id WHERE a.campaign_id = ? AND a.mode = "
        "'exclude'",
        {campaign_id});
    if (!excluded) return Fail(excluded.error());
    if ((*excluded)->Int(0) < members) {
      auto overlap = c.QueryOne(
          std::string("SELECT COUNT(*) FROM contacts c WHERE c.status = ? AND c.id IN ("
                      "  SELECT xl.contact_id FROM contact_lists xl JOIN campaign_audience a"
                      "    ON a.kind = 'list' AND a.mode = 'exclude' AND a.ref_id = xl.list_id"
                      "    WHERE a.campaign_id = ? AND xl.state = 'subscribed'"
                      "  UNION"
                      "  SELECT xt.contact_id FROM contact_tags xt JOIN campaign_audience a"
                      "    ON a.kind = 'tag' AND a.mode = 'exclude' AND a.ref_id = xt.tag_id"
                      "    WHERE a.campaign_id = ?)"
                      " AND EXISTS (SELECT 1 FROM ") +
              (list ? "contact_lists m WHERE m.contact_id = c.id AND m.list_id = ?"
                      " AND m.state = 'subscribed')"
                    : "contact_tags m WHERE m.contact_id = c.id AND m.tag_id = ?)"),
          {std::string(kSubscribedStatus), campaign_id, campaign_id, group});
      if (!overlap) return Fail(overlap.error());
      return subscribed - (*overlap)->Int(0);
    }
  }
  auto row = c.QueryOne(Sql({"SELECT COUNT(*) FROM (", kAudienceIds, ") aud"}),
                        AudienceParams(campaign_id));
  if (!row) return Fail(row.error());
  return (*row)->Int(0);
}

Result<std::vector<int64_t>> SampleAudience(store::Conn& c, int64_t campaign_id, int n) {
  auto params = AudienceParams(campaign_id);
  params.emplace_back(static_cast<int64_t>(n));
  auto rows = c.Query(Sql({kAudienceIds, " ORDER BY c.id LIMIT ?"}), params);
  if (!rows) return Fail(rows.error());
  std::vector<int64_t> ids;
  for (const auto& r : *rows) ids.push_back(r.Int(0));
  return ids;
}

Result<int64_t> CountSuppressedAudience(store::Conn& c, int64_t campaign_id) {
  // Driven by the few contacts a suppression applies to: the live contacts address entries
  // point at, and the contacts at a suppressed domain (domains are stored as lower-case
  // letters, digits, dots and hyphens, so LIKE sees no wildcard in them).
  auto row = c.QueryOne(
      Sql({"SELECT COUNT(*) FROM (", kAudienceIds,
           " AND c.id IN (SELECT s.contact_id FROM suppressions s WHERE s.contact_id IS NOT NULL"
           " UNION SELECT d.id FROM suppressions s JOIN contacts d"
           " ON d.email LIKE '%@' || s.domain WHERE s.domain IS NOT NULL)) aud"}),
      AudienceParams(campaign_id));
  if (!row) return Fail(row.error());
  return (*row)->Int(0);
}

Result<Recorded> RecordRecipients(store::Conn& c, int64_t campaign_id, int64_t now) {
  std::vector<Value> params{campaign_id, now};
  for (auto& v : AudienceParams(campaign_id)) params.push_back(v);
  auto ins = c.Exec(
      Sql({"INSERT INTO campaign_recipients (campaign_id, contact_id, status, updated_at) "
           "SELECT ?, aud.id, 'pending', ? FROM (",
           kAudienceIds, ") aud WHERE true ON CONFLICT (campaign_id, contact_id) DO NOTHING"}),
      params);
  if (!ins) return Fail(ins.error());
  auto row =
      c.QueryOne("SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ?", {campaign_id});
  if (!row) return Fail(row.error());
  return Recorded{.added = *ins, .total = (*row)->Int(0)};
}

Result<std::vector<int64_t>> MissingIds(store::Conn& c, const char* table,
                                        const std::vector<int64_t>& ids) {
  // `table` is one of two constants chosen by the caller, never input.
  std::string sql = std::string("SELECT 1 FROM ") +
                    (std::string_view(table) == "lists" ? "lists" : "tags") + " WHERE id = ?";
  std::vector<int64_t> missing;
  for (int64_t id : ids) {
    auto row = c.QueryOne(sql, {id});
    if (!row) return Fail(row.error());
    if (!*row) missing.push_back(id);
  }
  return missing;
}

Result<int64_t> CountRecipients(store::Conn& c, int64_t campaign_id) {
  auto recipients =
      c.QueryOne("SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ?", {campaign_id});
  if (!recipients) return Fail(recipients.error());
  return *recipients ? (*recipients)->Int(0) : int64_t{0};
}

Result<std::vector<AudienceUse>> AudienceUses(store::Conn& c, const std::string& kind,
                                              int64_t ref_id) {
  auto campaigns = c.Query(
      "SELECT k.id, k.name, k.status, a.mode FROM campaign_audience a JOIN campaigns k ON k.id = "
      "a.campaign_id WHERE a.kind = ? AND a.ref_id = ? ORDER BY k.id, a.mode",
      {kind, ref_id});
  if (!campaigns) return Fail(campaigns.error());
  std::vector<AudienceUse> out;
  for (const auto& r : *campaigns) out.push_back({r.Int(0), r.Str(1), r.Str(2), r.Str(3)});
  return out;
}

Result<bool> NameTaken(store::Conn& c, const std::string& name) {
  auto row = c.QueryOne("SELECT 1 FROM campaigns WHERE name = ?", {name});
  if (!row) return Fail(row.error());
  return row->has_value();
}

}  // namespace crmd::marketing::campaigns_repo

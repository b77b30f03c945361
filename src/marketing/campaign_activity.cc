#include "src/marketing/campaign_activity.h"

#include <algorithm>

namespace crmd::marketing {

namespace {

constexpr int64_t kHour = 3600;
constexpr int64_t kDay = 86400;

// What is counted per bucket: the column of the event's time, and whether only messages
// that did not bounce since count (delivered).
struct EventSeries {
  const char* column;
  bool unbounced;
  int64_t ActivityBucket::*field;
};

constexpr EventSeries kSeries[] = {
    {"sent_at", false, &ActivityBucket::sent},       {"sent_at", true, &ActivityBucket::delivered},
    {"bounced_at", false, &ActivityBucket::bounced}, {"opened_at", false, &ActivityBucket::opened},
    {"clicked_at", false, &ActivityBucket::clicked},
};

// The first and last event times of the campaign's recipients; nullopt when none.
Result<std::optional<std::pair<int64_t, int64_t>>> EventSpan(store::Conn& c, int64_t id) {
  auto row = c.QueryOne(
      "SELECT MIN(sent_at), MIN(bounced_at), MAX(sent_at), MAX(bounced_at), MAX(opened_at), "
      "MAX(clicked_at) FROM campaign_recipients WHERE campaign_id = ?",
      {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<std::pair<int64_t, int64_t>>{};
  std::optional<int64_t> lo, hi;
  for (size_t i = 0; i < 6; ++i) {
    auto v = (*row)->OptInt(i);
    if (!v) continue;
    if (i < 2) lo = lo ? std::min(*lo, *v) : *v;
    hi = hi ? std::max(*hi, *v) : *v;
  }
  if (!lo || !hi) return std::optional<std::pair<int64_t, int64_t>>{};
  return std::optional<std::pair<int64_t, int64_t>>(std::make_pair(*lo, *hi));
}

// Hours for up to two days of activity, else days, and never more than the bucket limit.
int64_t BucketWidth(int64_t span) {
  if (span <= 2 * kDay) return kHour;
  int64_t days = (span / kDay + kMaxActivityBuckets) / kMaxActivityBuckets;
  return std::max<int64_t>(1, days) * kDay;
}

}  // namespace

Result<CampaignActivity> LoadCampaignActivity(store::Conn& c, int64_t id, int64_t until) {
  CampaignActivity out;
  auto span = EventSpan(c, id);
  if (!span) return Fail(span.error());
  if (*span) {
    auto [lo, hi] = **span;
    hi = std::max(hi, until);
    out.bucket_s = BucketWidth(hi - lo);
    const int64_t start = lo - lo % out.bucket_s;
    const int64_t n = std::min<int64_t>(kMaxActivityBuckets, (hi - start) / out.bucket_s + 1);
    out.buckets.resize(n);
    for (int64_t i = 0; i < n; ++i) out.buckets[i].start = start + i * out.bucket_s;
    for (const EventSeries& s : kSeries) {
      std::string col = s.column;
      auto rows = c.Query("SELECT (" + col + " - ?) / ?, COUNT(*) FROM campaign_recipients " +
                              "WHERE campaign_id = ? AND " + col + " IS NOT NULL" +
                              (s.unbounced ? " AND bounced_at IS NULL" : "") + " GROUP BY 1",
                          {start, out.bucket_s, id});
      if (!rows) return Fail(rows.error());
      for (const auto& r : *rows) {
        int64_t b = std::clamp<int64_t>(r.Int(0), 0, n - 1);
        out.buckets[b].*s.field += r.Int(1);
      }
    }
  }
  auto links = c.Query(
      "SELECT url, clicks FROM campaign_link_clicks WHERE campaign_id = ? "
      "ORDER BY clicks DESC, url LIMIT ?",
      {id, kMaxReportLinks});
  if (!links) return Fail(links.error());
  for (auto& r : *links) out.links.push_back({.url = r.TakeStr(0), .clicks = r.Int(1)});
  return out;
}

Status RecordLinkClick(store::Conn& c, int64_t campaign_id, int64_t contact_id,
                       const std::string& url, int64_t now) {
  auto recipient =
      c.QueryOne("SELECT 1 FROM campaign_recipients WHERE campaign_id = ? AND contact_id = ?",
                 {campaign_id, contact_id});
  if (!recipient) return Fail(recipient.error());
  if (!*recipient || url.empty() || url.size() > kMaxCountedUrl) return Ok();
  auto n = c.Exec(
      "INSERT INTO campaign_link_clicks (campaign_id, url, clicks, last_at) VALUES (?, ?, 1, ?) "
      "ON CONFLICT (campaign_id, url) DO UPDATE SET clicks = campaign_link_clicks.clicks + 1, "
      "last_at = excluded.last_at",
      {campaign_id, url, now});
  if (!n) return Fail(n.error());
  return Ok();
}

}  // namespace crmd::marketing

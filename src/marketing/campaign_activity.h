#pragma once
// A campaign's activity over time and per link, for the console's campaign report
// (src/console/campaign_pages.h): how many of its messages were sent, delivered, bounced,
// opened and clicked in each hour (or day, for a campaign whose activity spans more than
// two days), and how many clicks each link of the message had.
//
// Over time is an aggregate of the campaign's own recipient rows (its primary key prefix,
// one GROUP BY per event); per link is the campaign_link_clicks counters (migration
// 0083), kept as clicks arrive. Plain values and stateless functions; thread-safe.
// REQUIRES: inside a Database::Read (or Write) transaction.
#include <cstdint>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::marketing {

struct ActivityBucket {
  int64_t start = 0;  // unix seconds
  int64_t sent = 0, delivered = 0, bounced = 0, opened = 0, clicked = 0;
};

struct LinkClicks {
  std::string url;
  int64_t clicks = 0;
};

struct CampaignActivity {
  int64_t bucket_s = 3600;              // 3600 (hours) or 86400 (days)
  std::vector<ActivityBucket> buckets;  // consecutive, from the first event to `until`
  std::vector<LinkClicks> links;        // most clicked first, at most kMaxReportLinks
};

inline constexpr int64_t kMaxActivityBuckets = 400;
inline constexpr int64_t kMaxReportLinks = 20;
// Longer URLs are not counted per link (an index key must stay small on both engines).
inline constexpr size_t kMaxCountedUrl = 2000;

// The activity of campaign `id` up to `until` (unix seconds; the buckets stop at the last
// event when that is later). Empty buckets when nothing was sent yet. Delivered counts a
// message sent in the bucket that has not bounced since.
Result<CampaignActivity> LoadCampaignActivity(store::Conn& c, int64_t id, int64_t until);

// One more click on `url` in campaign `campaign_id`'s report, when the contact is one of
// its recipients (a click through a forwarded message of another campaign is not) and the
// URL is at most kMaxCountedUrl bytes.
Status RecordLinkClick(store::Conn& c, int64_t campaign_id, int64_t contact_id,
                       const std::string& url, int64_t now);

}  // namespace crmd::marketing

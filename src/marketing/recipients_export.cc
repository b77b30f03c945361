#include "src/marketing/recipients_export.h"

#include <vector>

#include "src/core/clock.h"
#include "src/core/crypto.h"
#include "src/crm/csv_export.h"

namespace crmd::marketing {
namespace {

constexpr const char* kRecipientColumns[] = {
    "email",     "first_name", "last_name",  "status",        "reason",
    "attempts",  "round",      "message_id", "smtp_code",     "sent_at",
    "opened_at", "clicked_at", "bounced_at", "complained_at", "unsubscribed_at"};

std::string OptText(const store::Row& r, size_t i) { return r.OptStr(i).value_or(""); }

std::string OptNumber(const store::Row& r, size_t i) {
  auto v = r.OptInt(i);
  return v ? std::to_string(*v) : "";
}

std::string OptTime(const store::Row& r, size_t i) {
  auto v = r.OptInt(i);
  return v ? FormatRfc3339(*v) : "";
}

Result<int64_t> DecodeRecipientsCursor(const std::string& cursor) {
  if (cursor.empty()) return 0;
  auto raw = crypto::Base64UrlDecode(cursor);
  if (!raw || raw->rfind("r:", 0) != 0 || raw->size() < 3 ||
      raw->find_first_not_of("0123456789", 2) != std::string::npos || raw->size() > 20)
    return Fail(Errc::kInvalidArgument, "cursor is not valid; pass next_cursor unchanged");
  return std::stoll(raw->substr(2));
}

}  // namespace

Result<RecipientsCsvPage> RecipientsExporter::Page(int64_t campaign_id, const std::string& cursor,
                                                   int max_rows) {
  if (max_rows < 1 || max_rows > kMaxPageRows)
    return Fail(Errc::kInvalidArgument, "limit must be between 1 and 100000");
  auto after = DecodeRecipientsCursor(cursor);
  if (!after) return Fail(after.error());
  return db_.Read([&](store::Conn& c) -> Result<RecipientsCsvPage> {
    auto exists = c.QueryOne("SELECT id FROM campaigns WHERE id = ?", {campaign_id});
    if (!exists) return Fail(exists.error());
    if (!*exists)
      return Fail(Errc::kNotFound, "no campaign with id " + std::to_string(campaign_id));
    auto rows = c.Query(
        "SELECT r.contact_id, c.email, c.first_name, c.last_name, r.status, r.reason, "
        "r.attempts, r.round, r.message_id, r.smtp_code, r.sent_at, r.opened_at, r.clicked_at, "
        "r.bounced_at, r.complained_at, r.unsubscribed_at "
        "FROM campaign_recipients r JOIN contacts c ON c.id = r.contact_id "
        "WHERE r.campaign_id = ? AND r.contact_id > ? ORDER BY r.contact_id LIMIT ?",
        {campaign_id, *after, int64_t{max_rows} + 1});
    if (!rows) return Fail(rows.error());
    RecipientsCsvPage page;
    if (cursor.empty())
      crm::AppendCsvRecord(page.csv, std::vector<std::string>(std::begin(kRecipientColumns),
                                                              std::end(kRecipientColumns)));
    bool more = rows->size() > static_cast<size_t>(max_rows);
    if (more) rows->erase(rows->begin() + max_rows, rows->end());
    std::vector<std::string> cells;
    for (const auto& r : *rows) {
      cells = {r.Str(1),        r.Str(2),        r.Str(3),       r.Str(4),        OptText(r, 5),
               OptNumber(r, 6), OptNumber(r, 7), OptText(r, 8),  OptNumber(r, 9), OptTime(r, 10),
               OptTime(r, 11),  OptTime(r, 12),  OptTime(r, 13), OptTime(r, 14),  OptTime(r, 15)};
      crm::AppendCsvRecord(page.csv, cells);
    }
    page.rows = rows->size();
    if (more)
      page.next_cursor = crypto::Base64UrlEncode("r:" + std::to_string(rows->back().Int(0)));
    return page;
  });
}

Result<size_t> RecipientsExporter::WriteAll(int64_t campaign_id,
                                            const std::function<bool(std::string_view)>& write,
                                            int page_rows) {
  size_t total = 0;
  std::string cursor;
  while (true) {
    auto page = Page(campaign_id, cursor, page_rows);
    if (!page) return Fail(page.error());
    total += page->rows;
    if (!write(page->csv)) return Fail(Errc::kUnavailable, "the export's output was closed");
    if (!page->next_cursor) return total;
    cursor = std::move(*page->next_cursor);
  }
}

}  // namespace crmd::marketing

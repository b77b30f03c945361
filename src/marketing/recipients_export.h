#pragma once
// A campaign's recipients with their final state, as CSV (GET
// /campaigns/{id}/recipients?format=csv, `crmctl campaign recipients ID`).
//
// Columns: email, first_name, last_name, status (pending | sent | failed | skipped),
// reason, attempts, round, message_id, smtp_code, and the times (RFC 3339 UTC, empty when
// it did not happen) sent_at, opened_at, clicked_at, bounced_at, complained_at,
// unsubscribed_at. One row per recipient in contact id order; a recipient whose contact
// was deleted is gone with it. Cells are written by crm::AppendCsvCell (RFC 4180, formula
// guard). Made in pages of rows, each one read of the database, so memory holds one page.
// Thread-safe: all state is in the database and the cursor.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::marketing {

struct RecipientsCsvPage {
  std::string csv;  // the header row first when the cursor was empty
  size_t rows = 0;
  std::optional<std::string> next_cursor;
};

class RecipientsExporter {
 public:
  static constexpr int kDefaultPageRows = 5000;
  static constexpr int kMaxPageRows = 100000;

  explicit RecipientsExporter(store::Database& db) : db_(db) {}
  RecipientsExporter(const RecipientsExporter&) = delete;
  RecipientsExporter& operator=(const RecipientsExporter&) = delete;

  // kNotFound when there is no such campaign; kInvalidArgument for a bad cursor or limit.
  Result<RecipientsCsvPage> Page(int64_t campaign_id, const std::string& cursor,
                                 int max_rows = kDefaultPageRows);
  // Every page in turn to `write` (false stops: kUnavailable). Answers the number of rows.
  Result<size_t> WriteAll(int64_t campaign_id, const std::function<bool(std::string_view)>& write,
                          int page_rows = kDefaultPageRows);

 private:
  store::Database& db_;
};

}  // namespace crmd::marketing

#pragma once
// Contacts as CSV: what GET /contacts/export, `crmctl contacts export` and the console's
// Export button answer.
//
// Columns, in this order, named as the REST API names the fields: email, first_name,
// last_name, phone, status, type, lists, tags (names joined with '|'), then one column per
// custom field key that a selected contact has (sorted; a key that is also one of the
// columns before it is named "custom.<key>"). A custom value that is a string is written
// as it is, a number or boolean as JSON text, an array or object as JSON; absent is empty.
// These are the columns the import reads (docs/crm.md), so an export imports again.
// Cells are written by AppendCsvCell (RFC 4180 quoting, formula guard).
//
// The export is made in pages of rows in contact id order, each page one read of the
// database, so memory holds one page whatever the number of contacts. Rows are not one
// snapshot: a contact created while an export runs may or may not be in it.
//
// Thread-safe: all state is in the database and the cursor.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/http_types.h"
#include "src/core/result.h"
#include "src/crm/contacts.h"
#include "src/store/db.h"

namespace crmd::crm {

inline constexpr const char* kExportColumns[] = {"email",  "first_name", "last_name", "phone",
                                                 "status", "type",       "lists",     "tags"};

struct ContactExportPage {
  std::string csv;  // the header row first when the cursor was empty
  size_t rows = 0;
  std::optional<std::string> next_cursor;  // none: this was the last page
};

class ContactExporter {
 public:
  static constexpr int kDefaultPageRows = 5000;
  static constexpr int kMaxPageRows = 100000;

  explicit ContactExporter(store::Database& db) : db_(db) {}
  ContactExporter(const ContactExporter&) = delete;
  ContactExporter& operator=(const ContactExporter&) = delete;

  // One page of at most `max_rows` (1..kMaxPageRows) rows after `cursor` (empty: the
  // first page, with the header row; the custom columns are found then and carried in the
  // cursor). kInvalidArgument for a bad filter or cursor; kNotFound for a tag or list that
  // does not exist.
  Result<ContactExportPage> Page(const ContactFilter& filter, const std::string& cursor,
                                 int max_rows = kDefaultPageRows);

  // The whole export, page by page, each page's bytes handed to `write` (which returns
  // false to stop: Errc::kCancelled). Answers the number of rows.
  Result<size_t> WriteAll(const ContactFilter& filter,
                          const std::function<bool(std::string_view)>& write,
                          int page_rows = kDefaultPageRows);

  // The whole export as the pieces of a streamed answer (http::Response::stream), a page
  // each: the first page is read here, so a bad filter is this call's error; the others
  // as the listener asks for them (a page that cannot be read fails the answer).
  Result<std::function<http::StreamStep(std::string&)>> Stream(const ContactFilter& filter);

 private:
  store::Database& db_;
};

}  // namespace crmd::crm

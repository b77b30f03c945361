#include "src/crm/contacts_export.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "src/core/crypto.h"
#include "src/core/log.h"
#include "src/crm/contact_status.h"
#include "src/crm/contacts_repo.h"
#include "src/crm/csv_export.h"
#include "src/crm/lists.h"

namespace crmd::crm {
namespace {

using nlohmann::json;

const Error kBadExportCursor{
    Errc::kInvalidArgument, "cursor is not valid; pass next_cursor unchanged", {}};

struct ExportCursor {
  int64_t after = 0;
  std::vector<std::string> keys;  // custom field keys, in column order
};

std::string EncodeExportCursor(const ExportCursor& c) {
  return crypto::Base64UrlEncode(json{{"a", c.after}, {"k", c.keys}}.dump());
}

Result<ExportCursor> DecodeExportCursor(const std::string& text) {
  auto raw = crypto::Base64UrlDecode(text);
  if (!raw) return Fail(kBadExportCursor);
  json j = json::parse(*raw, nullptr, false);
  if (!j.is_object() || !j.contains("a") || !j["a"].is_number_integer() || !j.contains("k") ||
      !j["k"].is_array())
    return Fail(kBadExportCursor);
  ExportCursor c{.after = j["a"].get<int64_t>()};
  for (const auto& k : j["k"]) {
    if (!k.is_string()) return Fail(kBadExportCursor);
    c.keys.push_back(k.get<std::string>());
  }
  return c;
}

bool IsFixedColumn(const std::string& name) {
  return std::find(std::begin(kExportColumns), std::end(kExportColumns), name) !=
         std::end(kExportColumns);
}

std::string CustomCell(const json& fields, const std::string& key) {
  auto it = fields.find(key);
  if (it == fields.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

std::string HeaderRow(const std::vector<std::string>& keys) {
  std::vector<std::string> cells(std::begin(kExportColumns), std::end(kExportColumns));
  for (const auto& k : keys) cells.push_back(IsFixedColumn(k) ? "custom." + k : k);
  std::string out;
  AppendCsvRecord(out, cells);
  return out;
}

// The membership names of a page's contacts, joined with '|' and sorted, by contact id.
struct Joined {
  std::string lists, tags;
};

Result<std::map<int64_t, Joined>> JoinedMemberships(store::Conn& c,
                                                    const std::vector<Contact>& page) {
  std::map<int64_t, Joined> out;
  if (page.empty()) return out;
  auto names = contacts_repo::MembershipNamesInRange(c, page.front().id, page.back().id);
  if (!names) return Fail(names.error());
  std::sort(names->begin(), names->end(), [](const auto& a, const auto& b) {
    return std::tie(a.contact_id, a.list, a.name) < std::tie(b.contact_id, b.list, b.name);
  });
  for (const auto& n : *names) {
    std::string& into = n.list ? out[n.contact_id].lists : out[n.contact_id].tags;
    if (!into.empty()) into += '|';
    into += n.name;
  }
  return out;
}

Result<contacts_repo::ResolvedFilter> Resolve(store::Conn& c, const ContactFilter& filter) {
  contacts_repo::ResolvedFilter rf{.filter = &filter};
  if (filter.tag) {
    auto t = ResolveGroupIn(c, GroupKind::kTag, *filter.tag, false, 0);
    if (!t) return Fail(t.error());
    rf.tag_id = t->id;
  }
  if (filter.list) {
    auto l = ResolveGroupIn(c, GroupKind::kList, *filter.list, false, 0);
    if (!l) return Fail(l.error());
    rf.list_id = l->id;
  }
  return rf;
}

}  // namespace

Result<ContactExportPage> ContactExporter::Page(const ContactFilter& filter,
                                                const std::string& cursor, int max_rows) {
  if (max_rows < 1 || max_rows > kMaxPageRows)
    return Fail(Errc::kInvalidArgument, "limit must be between 1 and 100000");
  if (filter.status && !IsValidStatus(*filter.status))
    return Fail(Errc::kInvalidArgument, "status filter is not a known status");
  if (filter.type && !IsValidContactType(*filter.type))
    return Fail(Errc::kInvalidArgument, "type filter must be lead or customer");
  ExportCursor at;
  ContactExportPage page;
  if (!cursor.empty()) {
    auto decoded = DecodeExportCursor(cursor);
    if (!decoded) return Fail(decoded.error());
    at = std::move(*decoded);
  } else {
    // First pass: the custom field keys of every selected contact, for the header.
    auto keys = db_.Read([&](store::Conn& c) -> Result<std::set<std::string>> {
      auto rf = Resolve(c, filter);
      if (!rf) return Fail(rf.error());
      return contacts_repo::CustomFieldKeys(c, *rf);
    });
    if (!keys) return Fail(keys.error());
    at.keys.assign(keys->begin(), keys->end());
    page.csv = HeaderRow(at.keys);
  }
  auto done = db_.Read([&](store::Conn& c) -> Status {
    auto rf = Resolve(c, filter);
    if (!rf) return Fail(rf.error());
    auto rows = contacts_repo::ListContacts(c, *rf, at.after, max_rows + 1);
    if (!rows) return Fail(rows.error());
    bool more = rows->size() > static_cast<size_t>(max_rows);
    if (more) rows->resize(max_rows);
    auto joined = JoinedMemberships(c, *rows);
    if (!joined) return Fail(joined.error());
    std::vector<std::string> cells;
    for (const auto& k : *rows) {
      const Joined& m = (*joined)[k.id];
      cells = {k.email, k.first_name, k.last_name, k.phone, k.status, k.type, m.lists, m.tags};
      for (const auto& key : at.keys) cells.push_back(CustomCell(k.custom_fields, key));
      AppendCsvRecord(page.csv, cells);
    }
    page.rows = rows->size();
    if (more) page.next_cursor = EncodeExportCursor({.after = rows->back().id, .keys = at.keys});
    return Ok();
  });
  if (!done) return Fail(done.error());
  return page;
}

Result<std::function<http::StreamStep(std::string&)>> ContactExporter::Stream(
    const ContactFilter& filter) {
  auto first = Page(filter, "");
  if (!first) return Fail(first.error());
  struct State {
    ContactExporter& exporter;
    ContactFilter filter;
    std::optional<ContactExportPage> page;
  };
  auto state = std::make_shared<State>(
      State{.exporter = *this, .filter = filter, .page = std::move(*first)});
  return [state](std::string& out) {
    if (!state->page) return http::StreamStep::kEnd;
    out = std::move(state->page->csv);
    std::optional<std::string> cursor = std::move(state->page->next_cursor);
    state->page.reset();
    if (!cursor) return http::StreamStep::kEnd;
    auto next = state->exporter.Page(state->filter, *cursor);
    if (!next) {
      spdlog::error(R"("event":"export_failed","error":"{}")", JsonEscape(next.error().message));
      return http::StreamStep::kFailed;
    }
    state->page = std::move(*next);
    return http::StreamStep::kMore;
  };
}

Result<size_t> ContactExporter::WriteAll(const ContactFilter& filter,
                                         const std::function<bool(std::string_view)>& write,
                                         int page_rows) {
  size_t total = 0;
  std::string cursor;
  while (true) {
    auto page = Page(filter, cursor, page_rows);
    if (!page) return Fail(page.error());
    total += page->rows;
    if (!write(page->csv)) return Fail(Errc::kUnavailable, "the export's output was closed");
    if (!page->next_cursor) return total;
    cursor = std::move(*page->next_cursor);
  }
}

}  // namespace crmd::crm

// CSV exports: GET /contacts/export (the contacts a list_contacts filter selects; admin
// API key: an export is the whole list, every person's data at once) and the CSV answer of
// GET /campaigns/{id}/recipients?format=csv (a campaign's recipients and their final
// state; any key, as the JSON log of that route, src/rest/mail_api.cc).
//
// A contacts export without `limit` or `cursor` is the whole file in one answer, streamed
// (chunked) a page of rows at a time as it is read. With `limit` (at most 100000; the
// campaign recipients' CSV always, default 10000) it comes in pages: up to `limit` rows
// and, when there are more, a `Link: <...>; rel="next"` header with a cursor (also in
// `Crmd-Next-Cursor`). Only the first page has the header row, so the pages' bodies
// concatenated are one CSV file. Memory holds one page however large the list.
#include <string>
#include <vector>

#include "src/crm/contacts_export.h"
#include "src/crm/services.h"
#include "src/marketing/common.h"
#include "src/marketing/services.h"
#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {
namespace {

constexpr int kDefaultExportRows = 10000;

crm::Ref RefFromText(const std::string& v) {
  if (auto id = ParseId(v)) return *id;
  return v;
}

// The list_contacts filters, by the tool's argument names, plus cursor and limit.
struct ExportQuery {
  crm::ContactFilter filter;
  std::string cursor;
  int limit = kDefaultExportRows;
  bool paged = false;  // limit or cursor given
  std::string format;
};

std::vector<FieldError> ReadExportQuery(const std::string& query, bool contacts, ExportQuery& q) {
  std::vector<FieldError> errors;
  for (const auto& [k, v] : http::ParseForm(query)) {
    if (k == "cursor") {
      q.cursor = v;
      q.paged = true;
    } else if (k == "limit") {
      q.paged = true;
      auto n = ParseId(v);
      if (!n || *n > 100000)
        errors.push_back({k, "invalid", "must be a whole number from 1 to 100000"});
      else
        q.limit = static_cast<int>(*n);
    } else if (!contacts && k == "format") {
      q.format = v;
    } else if (contacts && (k == "status" || k == "type" || k == "source" || k == "query")) {
      if (v.empty()) errors.push_back({k, "invalid", "must not be empty"});
      (k == "status"   ? q.filter.status
       : k == "type"   ? q.filter.type
       : k == "source" ? q.filter.source
                       : q.filter.query) = v;
    } else if (contacts && (k == "tag" || k == "list")) {
      if (v.empty()) errors.push_back({k, "invalid", "must be an id or a name"});
      (k == "tag" ? q.filter.tag : q.filter.list) = RefFromText(v);
    } else if (contacts && (k == "created_after" || k == "created_before")) {
      auto t = marketing::ParseRfc3339(v);
      if (!t)
        errors.push_back({k, "invalid", "must be an RFC 3339 time, e.g. 2026-01-31T00:00:00Z"});
      else
        (k == "created_after" ? q.filter.created_from : q.filter.created_to) = *t;
    } else {
      errors.push_back({k, "unknown_parameter", "is not a parameter of this export"});
    }
  }
  return errors;
}

// The CSV answer of one page, with the next page's link.
http::Response CsvPage(const http::Request& req, std::string csv,
                       const std::optional<std::string>& next, const std::string& filename) {
  http::Response r = http::Response::Text(200, std::move(csv), "text/csv; charset=utf-8");
  r.Set("Content-Disposition", "attachment; filename=\"" + filename + "\"");
  r.Set("Cache-Control", "no-store");
  if (next) {
    std::string query;
    for (const auto& [k, v] : http::ParseForm(req.query))
      if (k != "cursor") query += http::PercentEncode(k) + "=" + http::PercentEncode(v) + "&";
    query += "cursor=" + *next;
    r.Set("Link", "<" + req.path + "?" + query + ">; rel=\"next\"");
    r.Set("Crmd-Next-Cursor", *next);
  }
  return r;
}

// A refused filter (a tag or list that does not exist is the parameter's error).
http::Response RefusedExport(const http::Request& req, const Error& e) {
  if (e.code == Errc::kNotFound)
    return Invalid(req,
                   {{e.message.rfind("tag", 0) == 0 ? "tag" : "list", "not_found", e.message}});
  return ProblemFromError(req, e);
}

// The whole contacts export in one answer, streamed a page at a time as it is read.
http::Response StreamedContacts(const http::Request& req, crm::ContactExporter& exporter,
                                const crm::ContactFilter& filter) {
  auto stream = exporter.Stream(filter);
  if (!stream) return RefusedExport(req, stream.error());
  http::Response r = http::Response::Text(200, "", "text/csv; charset=utf-8");
  r.Set("Content-Disposition", "attachment; filename=\"contacts.csv\"");
  r.Set("Cache-Control", "no-store");
  r.stream = std::move(*stream);
  return r;
}

}  // namespace

http::Response CampaignRecipientsCsv(RestContext& ctx, marketing::RecipientsExporter& exporter,
                                     int64_t campaign_id) {
  ExportQuery q;
  auto errors = ReadExportQuery(ctx.req.query, false, q);
  if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
  auto page = exporter.Page(campaign_id, q.cursor, q.limit);
  if (!page) return ProblemFromError(ctx.req, page.error());
  return CsvPage(ctx.req, std::move(page->csv), page->next_cursor,
                 "campaign-" + std::to_string(campaign_id) + "-recipients.csv");
}

void AddExportRoutes(RestRouter& router, const RestDeps& deps) {
  crm::ContactExporter* exporter = deps.crm->exporter.get();
  router.Add({"GET", "/contacts/export", Access::kAdmin, false, [exporter](RestContext& ctx) {
                ExportQuery q;
                auto errors = ReadExportQuery(ctx.req.query, true, q);
                if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
                if (!q.paged) return StreamedContacts(ctx.req, *exporter, q.filter);
                auto page = exporter->Page(q.filter, q.cursor, q.limit);
                if (!page) return RefusedExport(ctx.req, page.error());
                return CsvPage(ctx.req, std::move(page->csv), page->next_cursor, "contacts.csv");
              }});
}

}  // namespace crmd::rest

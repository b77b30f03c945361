#include "src/console/contacts_pages.h"

#include <cstring>
#include <memory>

#include "src/core/multipart.h"

namespace crmd::console {
namespace {

constexpr const char* kTransferPath = "/console/contacts/transfer";
constexpr const char* kImportPath = "/console/contacts/import";
// The options of the import form, in the order ParseImportOptions reads them.
constexpr const char* kImportFormOptions[] = {
    "list", "tag", "status", "consent", "existing", "events", "dry_run", "delimiter", "map"};
constexpr int kPreviewRows = 10;

// An upload's fields besides the file (csrf_token, action, the options), and the file.
struct ImportForm {
  FormFields fields;
  std::string_view file;
  bool has_file = false;
  std::string file_name;
};

std::optional<ImportForm> ReadImportForm(const http::Request& req) {
  auto ct = req.Header("Content-Type");
  auto boundary = ct ? http::MultipartBoundary(*ct) : std::nullopt;
  if (!boundary) return std::nullopt;
  auto parts = http::ParseMultipartForm(req.body, *boundary);
  if (!parts) return std::nullopt;
  ImportForm out;
  for (const http::FormPart& part : *parts) {
    if (part.name != "file") {
      out.fields.emplace_back(part.name, std::string(part.content));
    } else if (!out.has_file) {
      out.file = part.content;
      out.has_file = !part.content.empty();
      out.file_name = part.filename.value_or("");
    }
  }
  return out;
}

// The import options the form carries: each option field with a value (a select left at
// its default or an empty text field says nothing); `list` and `tag` may be several,
// comma-separated.
std::vector<std::pair<std::string, std::string>> ImportParams(const FormFields& fields) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* name : kImportFormOptions) {
    std::string v = FieldValue(fields, name);
    if (v.empty()) continue;
    if (std::strcmp(name, "list") == 0 || std::strcmp(name, "tag") == 0) {
      for (const std::string& one : SplitList(v, ",")) out.emplace_back(name, one);
    } else {
      out.emplace_back(name, v);
    }
  }
  return out;
}

std::string MappingLabel(const crm::ImportColumn& col) {
  if (col.ignored) return "(ignored)";
  if (col.custom) return "custom field " + col.field;
  return col.field;
}

ViewMap PreviewView(const crm::ImportPreview& preview) {
  ViewList columns, rows;
  for (size_t i = 0; i < preview.columns.size(); ++i)
    columns.emplace_back(ViewMap{{"name", preview.columns[i]},
                                 {"maps_to", MappingLabel(preview.mapping[i])},
                                 {"ignored", preview.mapping[i].ignored}});
  for (const auto& r : preview.rows) {
    ViewList cells;
    for (const std::string& c : r.cells) cells.emplace_back(ViewMap{{"value", c}});
    rows.emplace_back(ViewMap{{"line", std::to_string(r.line)},
                              {"cells", std::move(cells)},
                              {"problem", r.problem},
                              {"ok", r.problem.empty()}});
  }
  std::string delimiter = preview.delimiter == "\t" ? "tab" : preview.delimiter;
  return ViewMap{{"columns", std::move(columns)},
                 {"rows", std::move(rows)},
                 {"has_rows", !preview.rows.empty()},
                 {"delimiter", delimiter}};
}

ViewList Choices(const std::string& chosen,
                 std::initializer_list<std::pair<const char*, const char*>> all) {
  ViewList out;
  for (const auto& [value, label] : all)
    out.emplace_back(ViewMap{{"value", std::string(value)},
                             {"label", std::string(label)},
                             {"selected", chosen == value}});
  return out;
}

// The Contacts page; `form` refills the import form (after a preview or a refusal).
http::Response ContactsPage(const ContactsPagesDeps& d, const Person& p, int status = 200,
                            const FormFields& form = {}, const std::string& error = "",
                            const crm::ImportPreview* preview = nullptr) {
  ViewMap ctx{
      {"csrf_token", p.csrf_token},
      {"can_import", p.can_edit},
      {"can_export", p.is_admin && d.can_export},
      {"list", FieldValue(form, "list")},
      {"tag", FieldValue(form, "tag")},
      {"consent", FieldValue(form, "consent")},
      {"map", FieldValue(form, "map")},
      {"statuses", Choices(FieldValue(form, "status"),
                           {{"", "pending (the default)"}, {"subscribed", "subscribed"}})},
      {"existing", Choices(FieldValue(form, "existing"),
                           {{"", "update them (the default)"}, {"skip", "skip them"}})},
      {"events", Choices(FieldValue(form, "events"), {{"", "yes (the default)"}, {"false", "no"}})},
      {"dry_runs", Choices(FieldValue(form, "dry_run"),
                           {{"", "no: import"}, {"true", "yes: count only, change nothing"}})},
      {"delimiters",
       Choices(FieldValue(form, "delimiter"),
               {{"", "detect"}, {"comma", "comma"}, {"semicolon", "semicolon"}, {"tab", "tab"}})},
      {"export_statuses", Choices("", {{"", "(any)"},
                                       {"pending", "pending"},
                                       {"subscribed", "subscribed"},
                                       {"unsubscribed", "unsubscribed"},
                                       {"bounced", "bounced"},
                                       {"complained", "complained"}})}};
  if (!error.empty()) ctx.emplace("error", error);
  if (preview) ctx.emplace("preview", PreviewView(*preview));
  return RenderPage(status, "Import and export", "contacts_transfer.mustache", ctx,
                    ChromeFor(p, "transfer"));
}

governance::Actor PersonActor(const Person& p, const http::Request& req) {
  return {.kind = "user", .subject = p.subject, .request_id = req.request_id};
}

// A refused file or option on the form (422, 413), or crmd's own failure.
http::Response RefusedUpload(const ContactsPagesDeps& d, const Person& p, const ImportForm& f,
                             const Error& e) {
  if (e.code == Errc::kPayloadTooLarge) return ContactsPage(d, p, 413, f.fields, e.message);
  auto status = PersonFacingStatus(e);
  if (!status) return InternalError(e, ChromeFor(p, "transfer"));
  return ContactsPage(d, p, *status == 400 ? 422 : *status, f.fields, e.message);
}

http::Response PostUpload(const ContactsPagesDeps& d, const http::Request& req, const Person& p,
                          const ImportForm& f) {
  const std::string action = FieldValue(f.fields, "action");
  if (action != "preview" && action != "import")
    return MessagePage(400, "Bad request", "Use the buttons on the Contacts page.",
                       ChromeFor(p, "transfer"), kTransferPath, "Import and export");
  if (!f.has_file) return ContactsPage(d, p, 422, f.fields, "Choose a CSV file to import.");
  auto options = crm::ParseImportOptions(ImportParams(f.fields));
  if (!options) return RefusedUpload(d, p, f, options.error());
  if (action == "preview") {
    auto preview = d.imports->Preview(*options, f.file, kPreviewRows);
    if (!preview) return RefusedUpload(d, p, f, preview.error());
    return ContactsPage(d, p, 200, f.fields, "", &*preview);
  }
  size_t pos = 0;
  auto job = d.imports->Create(PersonActor(p, req), *options, [&](char* buf, size_t n) {
    size_t k = std::min(n, f.file.size() - pos);
    std::memcpy(buf, f.file.data() + pos, k);
    pos += k;
    return k;
  });
  if (!job) return RefusedUpload(d, p, f, job.error());
  return SeeOther(std::string(kImportPath) + "?id=" + std::to_string(job->id));
}

http::Response PostImport(const ContactsPagesDeps& d, const http::Request& req, const Person& p) {
  if (auto upload = ReadImportForm(req)) {
    if (auto refused = RefuseForgedPost(d.people, req, p, upload->fields)) return *refused;
    return PostUpload(d, req, p, *upload);
  }
  auto form = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, form)) return *refused;
  auto id = IdField(form, "id");
  if (FieldValue(form, "action") != "cancel" || !id)
    return MessagePage(400, "Bad request", "Use the buttons on the Contacts page.",
                       ChromeFor(p, "transfer"), kTransferPath, "Import and export");
  auto cancelled = d.imports->Cancel(PersonActor(p, req), *id);
  if (!cancelled)
    return ServiceErrorPage(cancelled.error(), ChromeFor(p, "transfer"), kTransferPath);
  return SeeOther(std::string(kImportPath) + "?id=" + std::to_string(*id));
}

http::Response ImportPage(const ContactsPagesDeps& d, const Person& p, int64_t id) {
  PageChrome chrome = ChromeFor(p, "transfer");
  auto job = d.imports->Get(id);
  if (!job) return ServiceErrorPage(job.error(), chrome, kTransferPath);
  const crm::ImportCounts& n = job->counts;
  const bool active =
      job->status == "queued" || job->status == "running" || job->status == "uploading";
  const int64_t total = job->rows_total.value_or(0);
  const int64_t not_applied = n.invalid + n.suppressed;
  ViewMap ctx{
      {"id", std::to_string(id)},
      {"status", std::string(job->status == "uploading" ? "queued" : job->status)},
      {"active", active},
      {"dry_run", job->options.dry_run},
      {"rows_done", std::to_string(n.rows_done)},
      {"rows_total", std::to_string(total)},
      {"percent", std::to_string(total > 0 ? n.rows_done * 100 / total : (active ? 0 : 100))},
      {"created", std::to_string(n.created)},
      {"updated", std::to_string(n.updated)},
      {"unchanged", std::to_string(n.unchanged)},
      {"skipped", std::to_string(n.skipped)},
      {"suppressed", std::to_string(n.suppressed)},
      {"invalid", std::to_string(n.invalid)},
      {"has_errors", not_applied > 0},
      {"not_applied", std::to_string(not_applied)},
      {"csrf_token", p.csrf_token}};
  if (job->error) ctx.emplace("error", *job->error);
  if (active) chrome.refresh_s = 2;
  return RenderPage(200, "Import " + std::to_string(id), "contact_import.mustache", ctx, chrome);
}

http::Response ErrorsFile(const ContactsPagesDeps& d, const Person& p, int64_t id) {
  auto csv = d.imports->ErrorsCsv(id);
  if (!csv) return ServiceErrorPage(csv.error(), ChromeFor(p, "transfer"), kTransferPath);
  http::Response r = http::Response::Text(200, std::move(*csv), "text/csv; charset=utf-8");
  r.Set("Content-Disposition",
        "attachment; filename=\"import-" + std::to_string(id) + "-errors.csv\"");
  r.Set("Cache-Control", "no-store");
  return r;
}

}  // namespace

ConsoleRoutes ContactsRoutes(ContactsPagesDeps deps) {
  auto d = std::make_shared<ContactsPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back(kTransferPath, [d](const http::Request& r) {
    return WithPerson(d->people, r, [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD", ChromeFor(p, "transfer"))) return *refused;
      return ContactsPage(*d, p);
    });
  });
  routes.exact.emplace_back(kImportPath, [d](const http::Request& r) {
    return WithEditor(d->people, r, "transfer", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "transfer")))
        return *refused;
      if (r.method == "POST") return PostImport(*d, r, p);
      auto id = IdField(http::ParseForm(r.query), "id");
      if (!id) return NotFoundPage(ChromeFor(p, "transfer"));
      return ImportPage(*d, p, *id);
    });
  });
  routes.exact.emplace_back("/console/contacts/import-errors", [d](const http::Request& r) {
    return WithEditor(d->people, r, "transfer", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD", ChromeFor(p, "transfer"))) return *refused;
      auto id = IdField(http::ParseForm(r.query), "id");
      if (!id) return NotFoundPage(ChromeFor(p, "transfer"));
      return ErrorsFile(*d, p, *id);
    });
  });
  return routes;
}

}  // namespace crmd::console

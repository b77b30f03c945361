// ImportService's preview (the first records of a file as they will be mapped) and its
// batches: read a batch of records at the committed position, map and validate them outside
// any transaction (email validation may ask DNS), then apply them, the counts, the error
// rows and the new position in one transaction that first checks the position is still the
// one the batch was read at (so no row is ever applied twice). A batch looks up which of
// its addresses are contacts already in a few statements; a new address whose lists and
// tags exist is created without a savepoint (nothing is written before a refusal), every
// other row goes through ContactService::UpsertIn in a savepoint of its own.
#include <cstring>
#include <map>
#include <unordered_set>

#include "src/crm/contacts_repo.h"
#include "src/crm/csv_export.h"
#include "src/crm/import_rules.h"
#include "src/crm/imports.h"
#include "src/crm/imports_repo.h"
#include "src/crm/lists.h"
#include "src/governance/settings.h"

namespace crmd::crm {

using nlohmann::json;

struct ImportService::Batch {
  struct Row {
    int64_t line = 0;
    std::string email;    // the cell as written (for the errors file)
    std::string invalid;  // non-empty: why the row cannot be applied
    ContactInput in;
    EmailVerdict verdict;
  };
  bool mine = false;  // the import is running under this owner's lease
  imports_repo::StoredImport stored;
  std::vector<Row> rows;
  int64_t end_offset = 0, next_line = 0;
  bool at_end = false;
};

namespace {

std::string TrimCell(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::vector<Ref> SplitRefs(const std::string& cell) {
  std::vector<Ref> out;
  size_t start = 0;
  for (;;) {
    size_t bar = cell.find('|', start);
    std::string v = TrimCell(cell.substr(start, bar == std::string::npos ? bar : bar - start));
    if (!v.empty()) out.push_back(v);
    if (bar == std::string::npos) return out;
    start = bar + 1;
  }
}

// The row's fields as a ContactInput; an empty cell leaves its field absent.
std::string MapImportRow(const std::vector<ImportColumn>& cols, const CsvRecord& rec,
                         ImportService* /*unused*/, ContactInput* in, std::string* email) {
  if (!rec.error.empty()) return rec.error;
  for (size_t i = cols.size(); i < rec.fields.size(); ++i)
    if (!TrimCell(rec.fields[i]).empty())
      return "the row has " + std::to_string(rec.fields.size()) + " fields, the header " +
             std::to_string(cols.size());
  json custom = json::object();
  for (size_t i = 0; i < cols.size() && i < rec.fields.size(); ++i) {
    const ImportColumn& col = cols[i];
    // The apostrophe an export puts before a formula-like cell is not part of the value.
    std::string v(RemoveFormulaGuard(TrimCell(rec.fields[i])));
    if (col.ignored || v.empty()) continue;
    if (col.custom) {
      custom[col.field] = v;
      continue;
    }
    const std::string& f = col.field;
    if (f == "email")
      *email = v, in->email = v;
    else if (f == "first_name")
      in->first_name = v;
    else if (f == "last_name")
      in->last_name = v;
    else if (f == "phone")
      in->phone = v;
    else if (f == "status")
      in->status = v;
    else if (f == "type")
      in->type = v;
    else if (f == "tags")
      in->tags = SplitRefs(v);
    else if (f == "lists")
      in->lists = SplitRefs(v);
  }
  if (!in->email) return "no email";
  if (!custom.empty()) in->custom_fields = std::move(custom);
  return "";
}

std::string RefusedReason(const EmailVerdict& v) {
  if (v.normalized.empty()) return "bad address";
  std::string reasons;
  for (const auto& r : v.reasons) reasons += (reasons.empty() ? "" : ", ") + r;
  return "address refused by email validation (" + reasons + ")";
}

struct RowOutcome {
  std::string outcome;  // created | updated | unchanged | skipped | suppressed | invalid
  std::string reason;
  int64_t contact_id = 0;
};

}  // namespace

Result<ImportPreview> ImportService::Preview(const ImportOptions& options, std::string_view file,
                                             int max_rows) {
  std::string_view head = file.substr(0, 64 * 1024);
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  ImportPreview out;
  out.delimiter = std::string(1, options.delimiter.value_or(DetectCsvDelimiter(head)));
  size_t pos = 0;
  CsvReader reader(
      [&](char* buf, size_t n) {
        size_t k = std::min(n, file.size() - pos);
        std::memcpy(buf, file.data() + pos, k);
        pos += k;
        return k;
      },
      {.delimiter = out.delimiter[0]});
  CsvRecord rec;
  if (!reader.Next(&rec)) return Fail(Errc::kInvalidArgument, "the file is empty (no header row)");
  if (!rec.error.empty()) return Fail(Errc::kInvalidArgument, "header row: " + rec.error);
  out.columns = rec.fields;
  auto cols = MapImportColumns(out.columns, options.map);
  if (!cols) return Fail(cols.error());
  out.mapping = *cols;
  int64_t end = rec.end_offset;
  while (static_cast<int>(out.rows.size()) < max_rows && reader.Next(&rec)) {
    ImportPreview::Row row{.line = rec.line};
    ContactInput in;
    std::string email;
    row.problem = MapImportRow(*cols, rec, this, &in, &email);
    if (row.problem.empty()) {
      EmailVerdict v = o_.contacts->ValidateEmail(email);
      if (!v.valid) row.problem = RefusedReason(v);
    }
    for (size_t i = 0; i < cols->size(); ++i)
      row.cells.push_back(i < rec.fields.size()
                              ? std::string(RemoveFormulaGuard(TrimCell(rec.fields[i])))
                              : std::string());
    out.rows.push_back(std::move(row));
    end = rec.end_offset;
  }
  if (!IsValidUtf8(file.substr(0, static_cast<size_t>(end))))
    return Fail(Errc::kInvalidArgument, "the file is not UTF-8 text");
  return out;
}

Result<ImportService::Batch> ImportService::ReadBatch(int64_t id, const std::string& owner) {
  auto batch = o_.db->Read([&](store::Conn& c) -> Result<Batch> {
    Batch b;
    auto s = imports_repo::Find(c, id);
    if (!s) return Fail(s.error());
    if (!*s) return Fail(Error::NotFound("import " + std::to_string(id) + " not found"));
    b.stored = std::move(**s);
    const ImportJob& j = b.stored.job;
    if (j.status != "running" || b.stored.lease_owner != owner) return b;
    b.mine = true;
    auto cols = MapImportColumns(j.columns, j.options.map);
    if (!cols) return Fail(cols.error());
    Status read = Ok();
    CsvReader reader(imports_repo::FileFrom(c, id, j.position, &read, &chunks_),
                     {.delimiter = j.delimiter.empty() ? ',' : j.delimiter[0],
                      .start_offset = j.position,
                      .start_line = j.line});
    b.end_offset = j.position;
    b.next_line = j.line;
    CsvRecord rec;
    while (static_cast<int>(b.rows.size()) < o_.batch_rows) {
      if (!reader.Next(&rec)) {
        b.at_end = true;
        break;
      }
      Batch::Row row{.line = rec.line};
      row.invalid = MapImportRow(*cols, rec, this, &row.in, &row.email);
      b.rows.push_back(std::move(row));
      b.end_offset = rec.end_offset;
      b.next_line = rec.next_line;
    }
    if (!read) return Fail(read.error());
    return b;
  });
  if (!batch) return batch;
  for (auto& row : batch->rows)
    if (row.invalid.empty()) row.verdict = o_.contacts->ValidateEmail(*row.in.email);
  return batch;
}

namespace {

// What a batch learns once and every row asks: which addresses are contacts already (read
// for the whole batch in a few statements, then kept up to date as rows create contacts),
// and the ids of the lists and tags rows name.
struct BatchKnowledge {
  std::unordered_set<std::string> existing;          // normalised addresses held by a contact
  std::unordered_set<std::string> suppressed;        // those of the others an entry applies to
  std::map<std::string, int64_t> list_ids, tag_ids;  // by the ref as a row wrote it
  KnownGroups groups;                                // their names, by id
  std::vector<int64_t> created_quietly;              // by CreateForImportIn: audited once
};

struct RowContext {
  store::Conn& c;
  ContactService& contacts;
  const governance::Actor& actor;
  const ImportJob& job;
  BatchKnowledge& known;
  bool double_opt_in = false;
  int64_t now = 0;
};

std::string RefKey(const Ref& ref) {
  if (const auto* id = std::get_if<int64_t>(&ref)) return "#" + std::to_string(*id);
  return "=" + std::get<std::string>(ref);
}

// The addresses among `emails` that contacts hold, in statements of up to 200 addresses.
Status FindExistingIn(store::Conn& c, const std::vector<std::string>& emails,
                      std::unordered_set<std::string>* out) {
  constexpr size_t kPerStatement = 200;
  for (size_t at = 0; at < emails.size(); at += kPerStatement) {
    size_t n = std::min(kPerStatement, emails.size() - at);
    std::string sql = "SELECT email FROM contacts WHERE email IN (?";
    std::vector<store::Value> params{emails[at]};
    for (size_t i = 1; i < n; ++i) {
      sql += ", ?";
      params.emplace_back(emails[at + i]);
    }
    auto rows = c.Query(sql + ")", params);
    if (!rows) return Fail(rows.error());
    for (const auto& r : *rows) out->insert(r.Str(0));
  }
  return Ok();
}

// The id of a group a row names, from the batch's cache or the database; nullopt for a tag
// that does not exist yet (the row then goes the careful way, which creates it). An
// unknown list is the row's error.
Result<std::optional<int64_t>> KnownGroupIn(RowContext& x, GroupKind kind, const Ref& ref) {
  auto& cache = kind == GroupKind::kList ? x.known.list_ids : x.known.tag_ids;
  std::string key = RefKey(ref);
  if (auto it = cache.find(key); it != cache.end()) return std::optional<int64_t>(it->second);
  auto g = ResolveGroupIn(x.c, kind, ref, false, x.now);
  if (!g) {
    if (g.error().code == Errc::kNotFound && kind == GroupKind::kTag)
      return std::optional<int64_t>();
    return Fail(g.error());
  }
  cache.emplace(key, g->id);
  (kind == GroupKind::kList ? x.known.groups.lists : x.known.groups.tags)[g->id] = g->name;
  return std::optional<int64_t>(g->id);
}

// The lists of a row (the import's and the row's own) as ids, leaving out those the
// existing contact left; an unknown list is the row's error.
Result<std::vector<Ref>> RowLists(RowContext& x, const std::vector<Ref>& row_lists,
                                  int64_t existing_id) {
  std::vector<Ref> out;
  std::vector<Ref> all = x.job.options.lists;
  all.insert(all.end(), row_lists.begin(), row_lists.end());
  for (const Ref& ref : all) {
    auto id = KnownGroupIn(x, GroupKind::kList, ref);
    if (!id) return Fail(id.error());
    if (existing_id) {
      auto left = import_rules::HasLeftListIn(x.c, existing_id, **id);
      if (!left) return Fail(left.error());
      if (*left) continue;
    }
    out.push_back(**id);
  }
  return out;
}

// Prepares `in` for a new contact (status, consent, source) or an existing one (no
// status change to subscribed); answers an outcome when the row stops here. Only an
// address the batch knows a contact holds is looked up.
Result<std::optional<RowOutcome>> PrepareRow(RowContext& x, const EmailVerdict& v, ContactInput& in,
                                             int64_t* existing_id) {
  std::optional<Contact> existing;
  if (x.known.existing.count(v.normalized)) {
    auto found = contacts_repo::FindContactByEmail(x.c, v.normalized);
    if (!found) return Fail(found.error());
    existing = std::move(*found);
  }
  const ImportOptions& o = x.job.options;
  if (existing) {
    if (!o.update_existing) return RowOutcome{.outcome = "skipped"};
    // An import never makes anyone subscribed who is not: their own consent does.
    if (in.status == "subscribed" && existing->status != "subscribed") in.status.reset();
    in.consent = false;
    in.source.reset();
    *existing_id = existing->id;
  } else {
    // Only an address the batch's lookup named is looked up again, for its entry.
    auto suppressed = x.known.suppressed.count(v.normalized)
                          ? x.contacts.SuppressedIn(x.c, v.normalized)
                          : Result<std::optional<Suppression>>(std::nullopt);
    if (!suppressed) return Fail(suppressed.error());
    if (*suppressed)
      return RowOutcome{
          .outcome = "suppressed",
          .reason = (**suppressed).is_domain() ? "suppressed domain" : "suppressed address"};
    std::string status = in.status.value_or(o.status);
    if (status == "subscribed" && o.consent.empty()) status = "pending";
    in.consent = status == "subscribed";
    // Left unset, a pending contact gets the double opt-in email (ContactService).
    if (status == "pending" && x.double_opt_in)
      in.status.reset();
    else
      in.status = status;
    in.source = "import:" + std::to_string(x.job.id);
  }
  auto lists = RowLists(x, in.lists, *existing_id);
  if (!lists) return RowOutcome{.outcome = "invalid", .reason = lists.error().message};
  in.lists = std::move(*lists);
  std::vector<Ref> tags = o.tags;
  tags.insert(tags.end(), in.tags.begin(), in.tags.end());
  in.tags = std::move(tags);
  return std::optional<RowOutcome>();
}

// A new address whose tags all exist: created without a savepoint, since a refusal comes
// before anything is written (ContactService::CreateForImportIn). nullopt when a tag is
// missing (the row goes the careful way).
Result<std::optional<RowOutcome>> CreateNewRow(RowContext& x, const EmailVerdict& v,
                                               ContactInput& in) {
  std::vector<Ref> tag_ids;
  for (const Ref& ref : in.tags) {
    auto id = KnownGroupIn(x, GroupKind::kTag, ref);
    if (!id) return Fail(id.error());
    if (!*id) return std::optional<RowOutcome>();
    tag_ids.push_back(**id);
  }
  in.tags = std::move(tag_ids);
  auto id = x.contacts.CreateForImportIn(x.c, x.actor, in, v, x.double_opt_in, x.known.groups);
  if (!id) {
    if (id.error().code == Errc::kInternal || id.error().code == Errc::kUnavailable)
      return Fail(id.error());
    return RowOutcome{.outcome = "invalid", .reason = id.error().message};
  }
  x.known.existing.insert(v.normalized);
  x.known.created_quietly.push_back(*id);
  return RowOutcome{.outcome = "created", .contact_id = *id};
}

Result<RowOutcome> ApplyImportRow(RowContext& x, const std::string& invalid, const EmailVerdict& v,
                                  ContactInput in) {
  if (!invalid.empty()) return RowOutcome{.outcome = "invalid", .reason = invalid};
  if (!v.valid) return RowOutcome{.outcome = "invalid", .reason = RefusedReason(v)};
  int64_t existing_id = 0;
  auto stop = PrepareRow(x, v, in, &existing_id);
  if (!stop) return Fail(stop.error());
  if (*stop) return std::move(**stop);
  if (!existing_id) {
    auto created = CreateNewRow(x, v, in);
    if (!created) return Fail(created.error());
    if (*created) return std::move(**created);
  }
  if (auto sp = x.c.Exec("SAVEPOINT import_row"); !sp) return Fail(sp.error());
  auto u = x.contacts.UpsertIn(x.c, x.actor, in, v);
  if (!u) {
    if (u.error().code == Errc::kInternal || u.error().code == Errc::kUnavailable)
      return Fail(u.error());
    if (auto rb = x.c.Exec("ROLLBACK TO SAVEPOINT import_row"); !rb) return Fail(rb.error());
    if (auto rel = x.c.Exec("RELEASE SAVEPOINT import_row"); !rel) return Fail(rel.error());
    return RowOutcome{.outcome = "invalid", .reason = u.error().message};
  }
  if (auto rel = x.c.Exec("RELEASE SAVEPOINT import_row"); !rel) return Fail(rel.error());
  x.known.existing.insert(v.normalized);
  return RowOutcome{.outcome = u->created ? "created" : (u->changed ? "updated" : "unchanged"),
                    .contact_id = u->contact.id};
}

governance::Actor ImportActor(const json& j) {
  if (!j.is_object()) return {.kind = "system"};
  return {.kind = j.value("kind", "system"),
          .subject = j.value("subject", ""),
          .client_id = j.value("client_id", ""),
          .request_id = j.value("request_id", "")};
}

}  // namespace

Result<bool> ImportService::ApplyBatch(const Batch& b, const std::string& owner, int64_t lease_s) {
  int64_t now = o_.clock->NowUnix();
  const ImportJob& job = b.stored.job;
  return o_.db->Write([&](store::Conn& c) -> Result<bool> {
    auto s = imports_repo::Find(c, job.id);
    if (!s) return Fail(s.error());
    if (!*s || (*s)->job.status != "running" || (*s)->lease_owner != owner ||
        (*s)->job.position != job.position)
      return false;  // cancelled, or taken over: the batch is someone else's now
    BatchKnowledge known;
    std::vector<std::string> emails;
    for (const auto& row : b.rows)
      if (row.invalid.empty() && row.verdict.valid) emails.push_back(row.verdict.normalized);
    if (auto st = FindExistingIn(c, emails, &known.existing); !st) return Fail(st.error());
    std::erase_if(emails, [&](const std::string& e) { return known.existing.count(e) > 0; });
    auto suppressed = o_.contacts->SuppressedAmongIn(c, emails);
    if (!suppressed) return Fail(suppressed.error());
    known.suppressed = std::move(*suppressed);
    const governance::Actor actor = ImportActor(b.stored.actor);
    RowContext x{
        .c = c, .contacts = *o_.contacts, .actor = actor, .job = job, .known = known, .now = now};
    if (o_.settings) {
      auto doc = o_.settings->SharedIn(c);
      if (!doc) return Fail(doc.error());
      x.double_opt_in = (*doc)->document.value("double_opt_in", false);
    }
    auto max_event = c.QueryOne("SELECT COALESCE(MAX(id), 0) FROM outbox_events");
    if (!max_event) return Fail(max_event.error());
    if (job.options.dry_run)
      if (auto sp = c.Exec("SAVEPOINT import_dry_run"); !sp) return Fail(sp.error());
    ImportCounts n;
    std::vector<int64_t> touched;
    std::vector<std::pair<const Batch::Row*, RowOutcome>> errors;
    for (const auto& row : b.rows) {
      auto r = ApplyImportRow(x, row.invalid, row.verdict, row.in);
      if (!r) return Fail(r.error());
      ++n.rows_done;
      const std::string& k = r->outcome;
      ++(k == "created"      ? n.created
         : k == "updated"    ? n.updated
         : k == "unchanged"  ? n.unchanged
         : k == "skipped"    ? n.skipped
         : k == "suppressed" ? n.suppressed
                             : n.invalid);
      if (r->contact_id) touched.push_back(r->contact_id);
      if (k == "invalid" || k == "suppressed") errors.emplace_back(&row, std::move(*r));
    }
    if (auto st = o_.contacts->AuditImportIn(c, actor, job.id, known.created_quietly); !st)
      return Fail(st.error());
    if (!job.options.events && !job.options.dry_run)
      for (int64_t cid : touched)
        if (auto d = c.Exec("DELETE FROM outbox_events WHERE id > ? AND contact_id = ?",
                            {(*max_event)->Int(0), cid});
            !d)
          return Fail(d.error());
    if (job.options.dry_run) {
      if (auto rb = c.Exec("ROLLBACK TO SAVEPOINT import_dry_run"); !rb) return Fail(rb.error());
      if (auto rel = c.Exec("RELEASE SAVEPOINT import_dry_run"); !rel) return Fail(rel.error());
    }
    for (const auto& [row, r] : errors)
      if (auto st = imports_repo::AddError(c, job.id, row->line, row->email, r.reason); !st)
        return Fail(st.error());
    auto u = c.Exec(
        "UPDATE imports SET position = ?, line = ?, rows_done = rows_done + ?, "
        "created = created + ?, updated = updated + ?, unchanged = unchanged + ?, "
        "skipped = skipped + ?, suppressed = suppressed + ?, invalid = invalid + ?, "
        "status = ?, lease_until = ?, updated_at = ?, finished_at = ? WHERE id = ?",
        {b.end_offset, b.next_line, n.rows_done, n.created, n.updated, n.unchanged, n.skipped,
         n.suppressed, n.invalid, std::string(b.at_end ? "done" : "running"), now + lease_s, now,
         b.at_end ? store::Value(now) : store::Null(), job.id});
    if (!u) return Fail(u.error());
    return !b.at_end;
  });
}

Result<bool> ImportService::RunBatch(int64_t id, const std::string& owner, int64_t lease_s) {
  auto b = ReadBatch(id, owner);
  if (!b) return Fail(b.error());
  if (!b->mine) return false;
  return ApplyBatch(*b, owner, lease_s);
}

Result<ImportJob> ImportService::RunToEnd(int64_t id, const std::string& owner,
                                          const std::function<void(const ImportJob&)>& progress) {
  constexpr int64_t kLeaseS = 300;
  int64_t now = o_.clock->NowUnix();
  auto leased = o_.db->Write([&](store::Conn& c) -> Result<int64_t> {
    return c.Exec(
        "UPDATE imports SET status = 'running', lease_owner = ?, lease_until = ?, updated_at = ? "
        "WHERE id = ? AND (status = 'queued' OR (status = 'running' AND (lease_owner = ? OR "
        "lease_until IS NULL OR lease_until <= ?)))",
        {owner, now + kLeaseS, now, id, owner, now});
  });
  if (!leased) return Fail(leased.error());
  for (bool more = *leased > 0; more;) {
    auto r = RunBatch(id, owner, kLeaseS);
    if (!r) return Fail(r.error());
    more = *r;
    if (progress) {
      auto j = Get(id);
      if (j) progress(*j);
    }
  }
  return Get(id);
}

}  // namespace crmd::crm

#include "src/crm/imports.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "src/crm/imports_repo.h"

namespace crmd::crm {

using nlohmann::json;

namespace {

constexpr size_t kMaxConsentNote = 1000;
const char* const kImportFields[] = {"email",  "first_name", "last_name", "phone",
                                     "status", "type",       "tags",      "lists"};

std::string TrimAscii(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::string LowerAscii(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

Ref ImportRef(const std::string& v) {
  if (!v.empty() && v.size() < 18 && std::all_of(v.begin(), v.end(), ::isdigit))
    return static_cast<int64_t>(std::stoll(v));
  return v;
}

Result<bool> ParseImportBool(const std::string& name, const std::string& v) {
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return Fail(Errc::kInvalidArgument, name + " must be true or false");
}

Status ParseImportMap(const std::string& v, ImportOptions* o) {
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    std::string pair =
        v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = pair.find('=');
    if (eq == std::string::npos || TrimAscii(pair.substr(0, eq)).empty() ||
        TrimAscii(pair.substr(eq + 1)).empty())
      return Fail(Errc::kInvalidArgument,
                  "map must be comma-separated column=field pairs (column=- ignores a column)");
    o->map.emplace_back(TrimAscii(pair.substr(0, eq)), TrimAscii(pair.substr(eq + 1)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return Ok();
}

Status ParseImportOption(const std::string& name, const std::string& v, ImportOptions* o) {
  if (name == "list" || name == "tag") {
    if (v.empty()) return Fail(Errc::kInvalidArgument, name + " must name a " + name);
    (name == "list" ? o->lists : o->tags).push_back(ImportRef(v));
  } else if (name == "status") {
    if (v != "pending" && v != "subscribed")
      return Fail(Errc::kInvalidArgument, "status must be pending or subscribed");
    o->status = v;
  } else if (name == "consent") {
    if (v.size() > kMaxConsentNote)
      return Fail(Errc::kInvalidArgument, "consent is too long (at most 1000)");
    o->consent = v;
  } else if (name == "existing") {
    if (v != "update" && v != "skip")
      return Fail(Errc::kInvalidArgument, "existing must be update or skip");
    o->update_existing = v == "update";
  } else if (name == "events" || name == "dry_run") {
    auto b = ParseImportBool(name, v);
    if (!b) return Fail(b.error());
    (name == "events" ? o->events : o->dry_run) = *b;
  } else if (name == "delimiter") {
    if (v == "," || v == "comma")
      o->delimiter = ',';
    else if (v == ";" || v == "semicolon")
      o->delimiter = ';';
    else if (v == "\t" || v == "tab")
      o->delimiter = '\t';
    else
      return Fail(Errc::kInvalidArgument, "delimiter must be comma, semicolon or tab");
  } else if (name == "map") {
    return ParseImportMap(v, o);
  } else {
    return Fail(Errc::kInvalidArgument, "unknown import option " + name);
  }
  return Ok();
}

json RefToJson(const Ref& r) {
  if (const auto* id = std::get_if<int64_t>(&r)) return *id;
  return std::get<std::string>(r);
}

json CountsJson(const ImportJob& j) {
  return {{"rows_done", j.counts.rows_done}, {"created", j.counts.created},
          {"updated", j.counts.updated},     {"unchanged", j.counts.unchanged},
          {"skipped", j.counts.skipped},     {"suppressed", j.counts.suppressed},
          {"invalid", j.counts.invalid}};
}

// One cell of the errors file: quoted when needed, and a leading character a spreadsheet
// would run as a formula neutralised with an apostrophe.
std::string ErrorsCell(const std::string& v) {
  std::string s = v;
  if (!s.empty() && std::strchr("=+-@\t\r", s[0])) s.insert(0, "'");
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

}  // namespace

Result<ImportOptions> ParseImportOptions(
    const std::vector<std::pair<std::string, std::string>>& params) {
  ImportOptions o;
  for (const auto& [name, value] : params)
    if (auto st = ParseImportOption(name, value, &o); !st) return Fail(st.error());
  if (o.status == "subscribed" && TrimAscii(o.consent).empty())
    return Fail(Errc::kInvalidArgument,
                "status=subscribed needs a consent note (consent=...): how these people agreed");
  return o;
}

json ImportOptionsToJson(const ImportOptions& o) {
  json lists = json::array(), tags = json::array(), map = json::array();
  for (const auto& r : o.lists) lists.push_back(RefToJson(r));
  for (const auto& r : o.tags) tags.push_back(RefToJson(r));
  for (const auto& [col, field] : o.map) map.push_back({col, field});
  json j = {{"lists", lists},
            {"tags", tags},
            {"status", o.status},
            {"consent", o.consent},
            {"existing", o.update_existing ? "update" : "skip"},
            {"events", o.events},
            {"dry_run", o.dry_run},
            {"map", map}};
  j["delimiter"] = o.delimiter ? json(std::string(1, *o.delimiter)) : json();
  return j;
}

Result<ImportOptions> ImportOptionsFromJson(const json& j) {
  if (!j.is_object()) return Fail(Errc::kInternal, "stored import options are not an object");
  ImportOptions o;
  auto lists = ParseRefs(j.value("lists", json::array()), "lists");
  auto tags = ParseRefs(j.value("tags", json::array()), "tags");
  if (!lists || !tags) return Fail(Errc::kInternal, "stored import options are damaged");
  o.lists = std::move(*lists);
  o.tags = std::move(*tags);
  o.status = j.value("status", "pending");
  o.consent = j.value("consent", "");
  o.update_existing = j.value("existing", "update") == "update";
  o.events = j.value("events", true);
  o.dry_run = j.value("dry_run", false);
  if (j.contains("delimiter") && j["delimiter"].is_string() &&
      j["delimiter"].get<std::string>().size() == 1)
    o.delimiter = j["delimiter"].get<std::string>()[0];
  for (const auto& p : j.value("map", json::array()))
    if (p.is_array() && p.size() == 2) o.map.emplace_back(p[0], p[1]);
  return o;
}

json ToJson(const ImportJob& j) {
  json out = {{"id", j.id},
              {"status", j.status == "uploading" ? "queued" : j.status},
              {"rows_total", j.rows_total ? json(*j.rows_total) : json()},
              {"bytes_total", j.bytes_total},
              {"dry_run", j.options.dry_run},
              {"options", ImportOptionsToJson(j.options)},
              {"columns", j.columns},
              {"created_at", j.created_at},
              {"updated_at", j.updated_at},
              {"finished_at", j.finished_at ? json(*j.finished_at) : json()}};
  out.update(CountsJson(j));
  if (j.error) out["error"] = *j.error;
  return out;
}

Result<std::vector<ImportColumn>> MapImportColumns(
    const std::vector<std::string>& header,
    const std::vector<std::pair<std::string, std::string>>& map) {
  std::vector<ImportColumn> cols;
  for (const std::string& cell : header) {
    std::string name = TrimAscii(cell);
    std::string lower = LowerAscii(name);
    ImportColumn col{.field = name, .custom = true};
    for (const char* f : kImportFields)
      if (lower == f) col = {.field = f};
    if (name.empty()) col = {.ignored = true};
    cols.push_back(col);
  }
  for (const auto& [column, field] : map) {
    bool found = false;
    for (size_t i = 0; i < header.size(); ++i) {
      if (LowerAscii(TrimAscii(header[i])) != LowerAscii(column)) continue;
      found = true;
      ImportColumn col{.field = field, .custom = true};
      for (const char* f : kImportFields)
        if (LowerAscii(field) == f) col = {.field = f};
      if (field == "-") col = {.ignored = true};
      cols[i] = col;
    }
    if (!found)
      return Fail(Errc::kInvalidArgument,
                  "map names the column " + column + ", which the file's header row does not have");
  }
  int emails = 0;
  for (const auto& c : cols) emails += !c.ignored && !c.custom && c.field == "email";
  if (emails == 0)
    return Fail(Errc::kInvalidArgument,
                "the file has no email column (a header cell named email, or map=column=email)");
  if (emails > 1) return Fail(Errc::kInvalidArgument, "more than one column maps to email");
  return cols;
}

ImportService::ImportService(ImportServiceOptions options) : o_(options) {}

Result<ImportJob> ImportService::Get(int64_t id) {
  return o_.db->Read([&](store::Conn& c) -> Result<ImportJob> {
    auto s = imports_repo::Find(c, id);
    if (!s) return Fail(s.error());
    if (!*s) return Fail(Error::NotFound("import " + std::to_string(id) + " not found"));
    return std::move((*s)->job);
  });
}

Result<ImportJob> ImportService::Cancel(const governance::Actor& /*actor*/, int64_t id) {
  int64_t now = o_.clock->NowUnix();
  return o_.db->Write([&](store::Conn& c) -> Result<ImportJob> {
    auto s = imports_repo::Find(c, id);
    if (!s) return Fail(s.error());
    if (!*s) return Fail(Error::NotFound("import " + std::to_string(id) + " not found"));
    const std::string& status = (*s)->job.status;
    if (status != "queued" && status != "running" && status != "uploading")
      return Fail(Errc::kInvalidTransition,
                  "import " + std::to_string(id) + " has already ended (" + status + ")");
    auto n = c.Exec(
        "UPDATE imports SET status = 'cancelled', lease_owner = NULL, lease_until = NULL, "
        "finished_at = ?, updated_at = ? WHERE id = ?",
        {now, now, id});
    if (!n) return Fail(n.error());
    auto after = imports_repo::Find(c, id);
    if (!after) return Fail(after.error());
    return std::move((*after)->job);
  });
}

Result<std::string> ImportService::ErrorsCsv(int64_t id) {
  return o_.db->Read([&](store::Conn& c) -> Result<std::string> {
    auto s = imports_repo::Find(c, id);
    if (!s) return Fail(s.error());
    if (!*s) return Fail(Error::NotFound("import " + std::to_string(id) + " not found"));
    auto rows = c.Query(
        "SELECT line, email, reason FROM import_errors WHERE import_id = ? ORDER BY line", {id});
    if (!rows) return Fail(rows.error());
    std::string out = "line,email,reason\r\n";
    for (const auto& r : *rows)
      out += std::to_string(r.Int(0)) + "," + ErrorsCell(r.Str(1)) + "," + ErrorsCell(r.Str(2)) +
             "\r\n";
    return out;
  });
}

Status ImportService::MarkFailed(int64_t id, const std::string& owner, const std::string& reason) {
  int64_t now = o_.clock->NowUnix();
  return o_.db->Write([&](store::Conn& c) -> Status {
    auto n = c.Exec(
        "UPDATE imports SET status = 'failed', error = ?, lease_owner = NULL, lease_until = NULL, "
        "finished_at = ?, updated_at = ? WHERE id = ? AND status = 'running' AND lease_owner = ?",
        {reason, now, now, id, owner});
    if (!n) return Fail(n.error());
    return Ok();
  });
}

Result<std::optional<int64_t>> ImportService::Lease(const std::string& owner, int64_t lease_s) {
  int64_t now = o_.clock->NowUnix();
  return o_.db->Write([&](store::Conn& c) -> Result<std::optional<int64_t>> {
    auto row = c.QueryOne(
        "SELECT i.id FROM imports i WHERE i.status = 'queued' OR (i.status = 'running' AND "
        "(i.lease_until IS NULL OR i.lease_until <= ?)) ORDER BY i.id LIMIT 1" +
            store::SkipLocked(c.dialect(), "i"),
        {now});
    if (!row) return Fail(row.error());
    if (!*row) return std::optional<int64_t>();
    int64_t id = (*row)->Int(0);
    auto n = c.Exec(
        "UPDATE imports SET status = 'running', lease_owner = ?, lease_until = ?, updated_at = ? "
        "WHERE id = ?",
        {owner, now + lease_s, now, id});
    if (!n) return Fail(n.error());
    return std::optional<int64_t>(id);
  });
}

ImportChunkCache::Chunk ImportChunkCache::Holding(int64_t id, int64_t offset) {
  std::lock_guard lock(mu_);
  if (id_ != id || chunk_.seq < 0 || offset < chunk_.start ||
      offset >= chunk_.start + static_cast<int64_t>(chunk_.data->size()))
    return {};
  return chunk_;
}

ImportChunkCache::Chunk ImportChunkCache::Numbered(int64_t id, int64_t seq) {
  std::lock_guard lock(mu_);
  if (id_ != id || chunk_.seq != seq) return {};
  return chunk_;
}

void ImportChunkCache::Keep(int64_t id, Chunk chunk) {
  std::lock_guard lock(mu_);
  id_ = id;
  chunk_ = std::move(chunk);
}

}  // namespace crmd::crm

// ImportService::Create: the file into import_chunks, checked on the way (size, UTF-8),
// its records counted, its header mapped; queued only when all of that passed.
#include <cstring>

#include "src/crm/imports.h"
#include "src/crm/imports_repo.h"
#include "src/crm/lists.h"

namespace crmd::crm {

using nlohmann::json;

namespace {

constexpr size_t kUploadChunkBytes = 1 << 20;
// The lease an import's creator holds to run it itself (RunToEnd renews it every batch).
constexpr int64_t kCreatorLeaseS = 300;

// Counts the records of a CSV text fed in pieces the way CsvReader reads them: a quote
// opens a quoted field only at the start of a field, a doubled quote inside one is text,
// line breaks outside quotes end a record unless the line is blank.
struct RecordCounter {
  char delimiter = ',';
  bool quoted = false;
  bool closing = false;  // a quote seen inside a quoted field: closes it unless doubled
  bool field_start = true;
  bool was_quoted = false;
  bool content = false;
  int64_t records = 0;
  void Feed(std::string_view s) {
    for (char ch : s) {
      if (closing) {
        closing = false;
        if (ch == '"') continue;
        quoted = false;
      }
      if (quoted) {
        closing = ch == '"';
        continue;
      }
      if (ch == '\n' || ch == '\r') {
        records += content;
        content = false;
        field_start = true;
        was_quoted = false;
        continue;
      }
      content = true;
      if (ch == delimiter) {
        field_start = true;
        was_quoted = false;
      } else if (ch == '"' && field_start && !was_quoted) {
        quoted = was_quoted = true;
        field_start = false;
      } else {
        field_start = false;
      }
    }
  }
  int64_t Finish() const { return records + content; }
};

// Reads up to `want` bytes from `source` onto `out`; false when the input has ended. A
// source that fails is an error: what came before it is not the whole file.
Result<bool> ReadUpTo(const ByteSource& source, std::string& out, size_t want) {
  size_t have = out.size();
  out.resize(have + want);
  size_t got = 0;
  while (got < want) {
    size_t n = source(out.data() + have + got, want - got);
    if (n == kByteSourceFailed)
      return Fail(Errc::kUnavailable, "the upload ended before the whole file arrived");
    if (n == 0) {
      out.resize(have + got);
      return false;
    }
    got += n;
  }
  return true;
}

}  // namespace

Status ImportService::Store(int64_t id, const ByteSource& source, ImportJob* job) {
  std::string carry;
  int64_t total = 0, offset = 0, seq = 0;
  RecordCounter counter;
  bool first = true;
  for (bool more = true; more;) {
    std::string chunk = std::move(carry);
    carry.clear();
    size_t before = chunk.size();
    auto read = ReadUpTo(source, chunk, kUploadChunkBytes);
    if (!read) return Fail(read.error());
    more = *read;
    total += static_cast<int64_t>(chunk.size() - before);
    if (total > o_.max_bytes)
      return Fail(Errc::kPayloadTooLarge, "the file is larger than import_max_bytes (" +
                                              std::to_string(o_.max_bytes) + " bytes)");
    if (std::memchr(chunk.data(), 0, chunk.size()))
      return Fail(Errc::kInvalidArgument, "the file is not UTF-8 text (it holds a NUL byte)");
    size_t tail = 0;
    if (!IsValidUtf8(chunk, !more, &tail))
      return Fail(Errc::kInvalidArgument, "the file is not UTF-8 text");
    carry = chunk.substr(chunk.size() - tail);
    chunk.resize(chunk.size() - tail);
    if (first) {
      std::string_view head = chunk;
      if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
      job->delimiter = std::string(1, job->options.delimiter.value_or(DetectCsvDelimiter(head)));
      counter.delimiter = job->delimiter[0];
      first = false;
    }
    counter.Feed(chunk);
    if (chunk.empty()) continue;
    auto st = o_.db->Write(
        [&](store::Conn& c) { return imports_repo::AddChunk(c, id, seq, offset, chunk); });
    if (!st) return st;
    ++seq;
    offset += static_cast<int64_t>(chunk.size());
  }
  job->bytes_total = total;
  job->rows_total = std::max<int64_t>(0, counter.Finish() - 1);
  return Ok();
}

Result<ImportJob> ImportService::Create(const governance::Actor& actor,
                                        const ImportOptions& options, const ByteSource& source,
                                        const std::string& lease_owner) {
  if (options.status == "subscribed" && options.consent.empty())
    return Fail(Errc::kInvalidArgument, "status=subscribed needs a consent note (consent=...)");
  auto lists = o_.db->Read([&](store::Conn& c) -> Status {
    for (const Ref& ref : options.lists)
      if (auto g = ResolveGroupIn(c, GroupKind::kList, ref, false, 0); !g)
        return Fail(Errc::kInvalidArgument, "list: " + g.error().message);
    return Ok();
  });
  if (!lists) return Fail(lists.error());
  int64_t now = o_.clock->NowUnix();
  json actor_json = {{"kind", actor.kind},
                     {"subject", actor.subject},
                     {"client_id", actor.client_id},
                     {"request_id", actor.request_id}};
  auto id = o_.db->Write(
      [&](store::Conn& c) { return imports_repo::Insert(c, options, actor_json, now); });
  if (!id) return Fail(id.error());
  ImportJob job{.id = *id, .status = "queued", .options = options};
  auto refuse = [&](const Error& e) -> Result<ImportJob> {
    (void)o_.db->Write([&](store::Conn& c) { return imports_repo::Delete(c, *id); });
    return Fail(e);
  };
  if (auto st = Store(*id, source, &job); !st) return refuse(st.error());
  // The header row: its cells, how they map, and where the first record starts.
  auto header = o_.db->Read([&](store::Conn& c) -> Result<CsvRecord> {
    Status read = Ok();
    CsvReader reader(imports_repo::FileFrom(c, *id, 0, &read), {.delimiter = job.delimiter[0]});
    CsvRecord rec;
    bool got = reader.Next(&rec);
    if (!read) return Fail(read.error());
    if (!got) return Fail(Errc::kInvalidArgument, "the file is empty (no header row)");
    if (!rec.error.empty()) return Fail(Errc::kInvalidArgument, "header row: " + rec.error);
    return rec;
  });
  if (!header) return refuse(header.error());
  auto cols = MapImportColumns(header->fields, options.map);
  if (!cols) return refuse(cols.error());
  job.columns = header->fields;
  job.position = header->end_offset;
  job.line = header->next_line;
  auto queued = o_.db->Write([&](store::Conn& c) -> Status {
    auto n = c.Exec(
        "UPDATE imports SET status = ?, lease_owner = ?, lease_until = ?, delimiter = ?, "
        "columns = ?, bytes_total = ?, rows_total = ?, position = ?, line = ?, updated_at = ? "
        "WHERE id = ? AND status = 'uploading'",
        {std::string(lease_owner.empty() ? "queued" : "running"),
         lease_owner.empty() ? store::Null() : store::Value(lease_owner),
         lease_owner.empty() ? store::Null() : store::Value(now + kCreatorLeaseS), job.delimiter,
         json(job.columns).dump(), job.bytes_total, store::Opt(job.rows_total), job.position,
         job.line, now, *id});
    if (!n) return Fail(n.error());
    if (*n == 0) return Fail(Errc::kInvalidTransition, "the import was cancelled while uploading");
    return Ok();
  });
  if (!queued) return refuse(queued.error());
  return Get(*id);
}

}  // namespace crmd::crm

#include "src/crm/imports_repo.h"

#include <cstring>
#include <memory>

namespace crmd::crm::imports_repo {

using nlohmann::json;

Result<int64_t> Insert(store::Conn& c, const ImportOptions& options, const json& actor,
                       int64_t now) {
  return c.InsertReturningId(
      "INSERT INTO imports (status, options, actor, created_at, updated_at) "
      "VALUES ('uploading', ?, ?, ?, ?) RETURNING id",
      {ImportOptionsToJson(options).dump(), actor.dump(), now, now});
}

Result<std::optional<StoredImport>> Find(store::Conn& c, int64_t id) {
  auto row = c.QueryOne(
      "SELECT id, status, options, delimiter, columns, bytes_total, rows_total, position, line, "
      "rows_done, created, updated, unchanged, skipped, suppressed, invalid, error, created_at, "
      "updated_at, finished_at, actor, lease_owner, lease_until FROM imports WHERE id = ?",
      {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<StoredImport>();
  const store::Row& r = **row;
  StoredImport s;
  ImportJob& j = s.job;
  j.id = r.Int(0);
  j.status = r.Str(1);
  auto opts = ImportOptionsFromJson(json::parse(r.Str(2), nullptr, false));
  if (!opts) return Fail(opts.error());
  j.options = std::move(*opts);
  j.delimiter = r.Str(3);
  json cols = json::parse(r.Str(4), nullptr, false);
  if (cols.is_array())
    for (const auto& col : cols)
      if (col.is_string()) j.columns.push_back(col.get<std::string>());
  j.bytes_total = r.Int(5);
  j.rows_total = r.OptInt(6);
  j.position = r.Int(7);
  j.line = r.Int(8);
  j.counts = {.rows_done = r.Int(9),
              .created = r.Int(10),
              .updated = r.Int(11),
              .unchanged = r.Int(12),
              .skipped = r.Int(13),
              .suppressed = r.Int(14),
              .invalid = r.Int(15)};
  j.error = r.OptStr(16);
  j.created_at = r.Int(17);
  j.updated_at = r.Int(18);
  j.finished_at = r.OptInt(19);
  s.actor = json::parse(r.Str(20), nullptr, false);
  s.lease_owner = r.Str(21);
  s.lease_until = r.Int(22);
  return std::optional<StoredImport>(std::move(s));
}

Status AddChunk(store::Conn& c, int64_t id, int64_t seq, int64_t start, const std::string& data) {
  auto n = c.Exec("INSERT INTO import_chunks (import_id, seq, start, data) VALUES (?, ?, ?, ?)",
                  {id, seq, start, data});
  if (!n) return Fail(n.error());
  return Ok();
}

Status Delete(store::Conn& c, int64_t id) {
  for (const char* sql :
       {"DELETE FROM import_errors WHERE import_id = ?",
        "DELETE FROM import_chunks WHERE import_id = ?", "DELETE FROM imports WHERE id = ?"})
    if (auto n = c.Exec(sql, {id}); !n) return Fail(n.error());
  return Ok();
}

namespace {

struct ChunkCursor {
  ImportChunkCache::Chunk chunk;  // seq -1: not found yet
  size_t pos = 0;
  size_t size() const { return chunk.data ? chunk.data->size() : 0; }
};

// The chunk holding `offset` (cur->chunk.seq < 0) or the one after cur's, from the cache
// or the database; seq stays -1 past the file's end.
Result<ImportChunkCache::Chunk> NextChunk(store::Conn& c, int64_t id, int64_t offset,
                                          const ChunkCursor& cur, ImportChunkCache* cache) {
  const bool first = cur.chunk.seq < 0;
  if (cache) {
    auto held = first ? cache->Holding(id, offset) : cache->Numbered(id, cur.chunk.seq + 1);
    if (held.seq >= 0) return held;
  }
  Result<std::optional<store::Row>> row =
      first
          ? c.QueryOne(
                "SELECT seq, start, data FROM import_chunks WHERE import_id = ? AND "
                "start <= ? ORDER BY seq DESC LIMIT 1",
                {id, offset})
          : c.QueryOne("SELECT seq, start, data FROM import_chunks WHERE import_id = ? AND seq = ?",
                       {id, cur.chunk.seq + 1});
  if (!row) return Fail(row.error());
  if (!*row) return ImportChunkCache::Chunk{};
  ImportChunkCache::Chunk chunk{.seq = (*row)->Int(0),
                                .start = (*row)->Int(1),
                                .data = std::make_shared<const std::string>((*row)->TakeStr(2))};
  if (cache) cache->Keep(id, chunk);
  return chunk;
}

}  // namespace

ByteSource FileFrom(store::Conn& c, int64_t id, int64_t offset, Status* status,
                    ImportChunkCache* cache) {
  auto cur = std::make_shared<ChunkCursor>();
  return [&c, id, offset, status, cur, cache](char* buf, size_t n) -> size_t {
    if (!*status) return 0;
    while (cur->pos >= cur->size()) {
      const bool first = cur->chunk.seq < 0;
      auto next = NextChunk(c, id, offset, *cur, cache);
      if (!next) {
        *status = Fail(next.error());
        return 0;
      }
      if (next->seq < 0) return 0;
      cur->chunk = std::move(*next);
      cur->pos = first ? static_cast<size_t>(offset - cur->chunk.start) : 0;
    }
    size_t k = std::min(n, cur->size() - cur->pos);
    std::memcpy(buf, cur->chunk.data->data() + cur->pos, k);
    cur->pos += k;
    return k;
  };
}

Status AddError(store::Conn& c, int64_t id, int64_t line, const std::string& email,
                const std::string& reason) {
  auto n = c.Exec(
      "INSERT INTO import_errors (import_id, line, email, reason) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (import_id, line) DO NOTHING",
      {id, line, email, reason});
  if (!n) return Fail(n.error());
  return Ok();
}

}  // namespace crmd::crm::imports_repo

#include "src/store/schema_info.h"

#include <algorithm>

namespace crmd::store {
namespace {

Result<std::vector<std::string>> FirstColumn(Conn& c, std::string_view sql,
                                             const std::vector<Value>& params) {
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::vector<std::string> out;
  out.reserve(rows->size());
  for (const auto& r : *rows) out.push_back(r.Str(0));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

Result<std::vector<std::string>> ListTables(Conn& c) {
  if (c.dialect() == Dialect::kSqlite)
    return FirstColumn(c,
                       "SELECT name FROM sqlite_master WHERE type = 'table' "
                       "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
                       {});
  return FirstColumn(c,
                     "SELECT table_name FROM information_schema.tables "
                     "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
                     {});
}

Result<std::vector<ColumnInfo>> ListColumns(Conn& c, std::string_view table) {
  const std::string t(table);
  auto rows = c.dialect() == Dialect::kSqlite
                  ? c.Query("SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", {t})
                  : c.Query(
                        "SELECT col.column_name, COALESCE(pk.ordinal_position, 0) "
                        "FROM information_schema.columns col LEFT JOIN ("
                        "  SELECT kcu.column_name, kcu.ordinal_position "
                        "  FROM information_schema.table_constraints tc "
                        "  JOIN information_schema.key_column_usage kcu "
                        "    ON kcu.constraint_schema = tc.constraint_schema "
                        "   AND kcu.constraint_name = tc.constraint_name "
                        "  WHERE tc.constraint_type = 'PRIMARY KEY' "
                        "    AND tc.table_schema = current_schema() AND tc.table_name = ?) pk "
                        "  ON pk.column_name = col.column_name "
                        "WHERE col.table_schema = current_schema() AND col.table_name = ? "
                        "ORDER BY col.ordinal_position",
                        {t, t});
  if (!rows) return Fail(rows.error());
  std::vector<ColumnInfo> out;
  out.reserve(rows->size());
  for (const auto& r : *rows)
    out.push_back({.name = r.Str(0), .pk_position = static_cast<int>(r.Int(1))});
  return out;
}

Result<std::vector<std::string>> ListReferencedTables(Conn& c, std::string_view table) {
  const std::string t(table);
  if (c.dialect() == Dialect::kSqlite)
    return FirstColumn(c, "SELECT \"table\" FROM pragma_foreign_key_list(?)", {t});
  return FirstColumn(c,
                     "SELECT ccu.table_name FROM information_schema.table_constraints tc "
                     "JOIN information_schema.constraint_column_usage ccu "
                     "  ON ccu.constraint_schema = tc.constraint_schema "
                     " AND ccu.constraint_name = tc.constraint_name "
                     "WHERE tc.constraint_type = 'FOREIGN KEY' "
                     "  AND tc.table_schema = current_schema() AND tc.table_name = ?",
                     {t});
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char ch : name) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
  return out;
}

Result<bool> TableExists(Conn& c, std::string_view table) {
  auto row = c.QueryOne(c.dialect() == Dialect::kSqlite
                            ? "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
                            : "SELECT 1 FROM information_schema.tables "
                              "WHERE table_schema = current_schema() AND table_name = ?",
                        {std::string(table)});
  if (!row) return Fail(row.error());
  return row->has_value();
}

}  // namespace crmd::store

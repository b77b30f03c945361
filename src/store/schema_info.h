#pragma once
// What tables and columns a database has, from the engine's own metadata (sqlite_master
// and pragma functions on SQLite, information_schema on PostgreSQL). For tools that work
// on every table without knowing the domain: `crmctl copy` and its verification.
//
// Stateless; each function runs its queries on the caller's connection (and so inside the
// caller's transaction).
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::store {

struct ColumnInfo {
  std::string name;
  int pk_position = 0;  // 1-based position in the primary key; 0 when not part of it
};

// Every ordinary table of the schema in use, sorted by name; the engine's own tables
// (sqlite_*) are left out.
Result<std::vector<std::string>> ListTables(Conn& c);
// Whether `table` exists in the current database (schema, on PostgreSQL).
Result<bool> TableExists(Conn& c, std::string_view table);
// The columns of `table` in declaration order. An unknown table answers an empty list.
Result<std::vector<ColumnInfo>> ListColumns(Conn& c, std::string_view table);
// The tables that `table`'s foreign keys refer to (itself included when it refers to
// itself), sorted, without duplicates.
Result<std::vector<std::string>> ListReferencedTables(Conn& c, std::string_view table);

// `name` as a quoted SQL identifier ("a""b"), valid on both engines.
std::string QuoteIdentifier(std::string_view name);

}  // namespace crmd::store

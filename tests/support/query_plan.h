#pragma once
// The plan a query gets, as text (one line per plan row), on either engine: SQLite's
// EXPLAIN QUERY PLAN, or PostgreSQL's EXPLAIN with sequential scans priced out (a small
// table is always cheapest to scan; a plan without one proves an index serves the query).
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::testing {

inline Result<std::string> QueryPlanText(store::Database& db, const std::string& sql,
                                         const std::vector<store::Value>& params) {
  const bool pg = db.dialect() == store::Dialect::kPostgres;
  auto plan = db.Read([&](store::Conn& c) -> Result<std::vector<store::Row>> {
    if (!pg) return c.Query("EXPLAIN QUERY PLAN " + sql, params);
    if (auto st = c.ExecScript("SET LOCAL enable_seqscan = off"); !st) return Fail(st.error());
    return c.Query("EXPLAIN " + sql, params);
  });
  if (!plan) return Fail(plan.error());
  std::string text;
  for (const auto& row : *plan) text += row.Str(row.size() - 1) + "\n";
  return text;
}

}  // namespace crmd::testing

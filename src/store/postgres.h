#pragma once
// PostgreSQL driver over libpq, chosen by database_url = postgresql://... or postgres://...
//
// A bounded pool of connections (opened lazily up to `pool_size`; a caller waits when all
// are busy). Each connection prepares a statement once, the first time its SQL text (and
// parameter types) is seen, and reuses it afterwards. Parameters are always bound: `?` in
// the portable SQL becomes `$n` (outside string literals and quoted identifiers), integers
// are sent as int8, reals as float8, text as text, NULL as an untyped parameter.
//
// Isolation, and why (docs/postgres.md):
// - Write() runs READ COMMITTED after taking one transaction-scoped advisory lock shared
//   by every crmd node on the database, so write transactions run one at a time across
//   the cluster, exactly as SQLite's single writer does. Every repository was written
//   against that guarantee: ids from NextIdSql (MAX + 1), outbox ids that grow in commit
//   order (the webhook cursor depends on it), conditional UPDATEs for single use. Under
//   the lock each statement sees every earlier commit, so READ COMMITTED is serial here;
//   REPEATABLE READ would be wrong (its snapshot is taken before the lock is granted).
// - Read() runs REPEATABLE READ READ ONLY: one consistent snapshot for the callback, like
//   a SQLite read transaction, and never blocks or is blocked by writers.
// - Round trips: a transaction's BEGIN (and a write's lock) go to the server in one libpq
//   pipeline with its first statement; a read's COMMIT is sent without waiting, and its
//   answer is read by the connection's next user. A read of one statement costs one round
//   trip (ReadStatement: no transaction at all), a read of n statements n, a write of n
//   statements n + 1 (its COMMIT is waited for: that is the durability acknowledgement).
// - A connection lost before the transaction began (at its first statement) is replaced
//   and the transaction retried once; lost later or at COMMIT, the caller gets
//   kUnavailable (the outcome is unknown, as with any database).
//
// Thread-safe.
#include <memory>
#include <string>

#include "src/store/db.h"

namespace crmd::store {

struct PostgresOptions {
  std::string url;    // libpq connection URI (postgresql://user@host:port/db?...)
  int pool_size = 8;  // connections at most
};

Result<std::unique_ptr<Database>> OpenPostgres(PostgresOptions options);

// `?` placeholders to `$1..$n`, leaving string literals, quoted identifiers, comments and
// dollar-quoted bodies alone. Exposed for unit tests.
std::string ToDollarPlaceholders(std::string_view sql, int* count = nullptr);

// True for "postgresql://..." and "postgres://...".
bool IsPostgresUrl(std::string_view url);

}  // namespace crmd::store

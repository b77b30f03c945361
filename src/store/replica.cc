#include "src/store/replica.h"

#include <spdlog/spdlog.h>

#include "src/store/postgres.h"

namespace crmd::store {
namespace {

// A read the standby could not serve is run on the primary; any other outcome (rows, or
// an error of the callback itself) is the answer.
template <typename Attempt>
Status WithFallback(Attempt on, Database& standby, Database& primary, metrics::Counter* fallbacks) {
  Status st = on(standby);
  if (st || st.error().code != Errc::kUnavailable) return st;
  if (fallbacks) fallbacks->Inc();
  spdlog::warn(R"("event":"read_replica_fallback","detail":"{}")", st.error().detail);
  return on(primary);
}

}  // namespace

Status ReplicaRouted::RunRead(const std::function<Status(Conn&)>& fn) {
  return WithFallback([&](Database& db) { return db.Read([&](Conn& c) { return fn(c); }); },
                      *standby_, primary_, fallbacks_);
}

Status ReplicaRouted::RunReadStatement(const std::function<Status(Conn&)>& fn) {
  return WithFallback(
      [&](Database& db) { return db.ReadStatement([&](Conn& c) { return fn(c); }); }, *standby_,
      primary_, fallbacks_);
}

Status ReplicaRouted::RunWrite(const std::function<Status(Conn&)>& fn) {
  return primary_.Write([&](Conn& c) { return fn(c); });
}

Result<std::unique_ptr<Database>> OpenReplicaRouted(const std::string& url, Database& primary,
                                                    int pool_size, metrics::Counter* fallbacks) {
  if (!IsPostgresUrl(url) || primary.dialect() != Dialect::kPostgres)
    return Fail(Errc::kInvalidArgument,
                "database_read_url needs PostgreSQL for both database_url and itself (a hot "
                "standby of database_url)");
  auto standby = OpenPostgres({.url = url, .pool_size = std::max(2, pool_size)});
  if (!standby) return Fail(standby.error());
  return std::unique_ptr<Database>(
      std::make_unique<ReplicaRouted>(std::move(*standby), primary, fallbacks));
}

}  // namespace crmd::store

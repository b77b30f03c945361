#pragma once
// A hot standby for the reads that tolerate lag (configuration `database_read_url`):
// reports, the dashboard, exports. A ReplicaRouted database sends Read() and
// ReadStatement() to the standby and Write() to the primary, so a service handed one can
// never write to the standby by mistake. A read the standby cannot serve (kUnavailable: the
// standby down, restarting, or a query cancelled by a replay conflict) runs on the primary
// instead, so a lost standby slows reports but fails nothing.
//
// Everything that must read its own writes (a tool that follows a write, confirmations,
// sessions, tokens) keeps the primary: only the services wired with this one read from the
// standby (docs/postgres.md, "Read replicas").
//
// Thread-safe.
#include <memory>
#include <string>

#include "src/core/metrics.h"
#include "src/store/db.h"

namespace crmd::store {

class ReplicaRouted final : public Database {
 public:
  // `primary` must outlive this. `fallbacks` (may be null) counts reads moved to the primary.
  ReplicaRouted(std::unique_ptr<Database> standby, Database& primary,
                metrics::Counter* fallbacks = nullptr)
      : standby_(std::move(standby)), primary_(primary), fallbacks_(fallbacks) {}

  Dialect dialect() const override { return primary_.dialect(); }
  Status Writable() const override { return primary_.Writable(); }

 protected:
  Status RunRead(const std::function<Status(Conn&)>& fn) override;
  Status RunWrite(const std::function<Status(Conn&)>& fn) override;
  Status RunReadStatement(const std::function<Status(Conn&)>& fn) override;

 private:
  std::unique_ptr<Database> standby_;
  Database& primary_;
  metrics::Counter* const fallbacks_;
};

// Opens the standby at `url` (postgresql://...; nothing is migrated there: it replays the
// primary's schema) and routes as above. kInvalidArgument when `url` or the primary is not
// PostgreSQL; kUnavailable when the standby cannot be reached at start.
Result<std::unique_ptr<Database>> OpenReplicaRouted(const std::string& url, Database& primary,
                                                    int pool_size,
                                                    metrics::Counter* fallbacks = nullptr);

}  // namespace crmd::store

#pragma once
// One group commit batch on SQLite's single writer connection (src/store/sqlite.cc leads
// the batches): its Write() calls one after the other in one transaction, and the COMMIT.
//
// Savepoints only after a failure. A call in a SAVEPOINT costs SQLite a copy of every
// page it touches into the statement journal (the same twenty-odd pages for every
// create_contact of a batch: its table's and indexes' last leaves, the counters, the
// audit log and the outbox), about a tenth of the writer's work a create
// (docs/performance.md). So a batch runs its calls without savepoints, and a
// call that fails has its work undone with the whole transaction's: ROLLBACK, then the
// calls that had succeeded in it run again in a new transaction, each in its savepoint
// now, and so does the rest of the batch. Each call's outcome is the one it would have
// had with a savepoint from the start (the calls that run again see the committed state
// and the earlier calls of the batch, without the failed one's work), at the price of
// running some callbacks twice, which every engine allows (db.h). A call that fails with
// none before it in the transaction costs no second run. After such a rollback the next
// kSavepointBatchesAfterFailure batches take savepoints from the start, so that a load
// where calls often fail (duplicates, say) runs each callback about once, as before. If
// SQLite rolls the whole transaction back on its own (I/O error, disk full), the calls
// already run in it fail and the rest of the batch goes on in a new transaction.
//
// Not thread-safe: one leader at a time runs batches (the counters may be read by any
// thread).
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <vector>

#include "src/core/log.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::store {

class SqliteConn;

// One Write() call as a batch runs it: its callback runs under the caller's log context
// (or none), and its outcome lands in `result` (and `thrown`, for an exception).
struct BatchCall {
  const std::function<Status(Conn&)>* fn = nullptr;
  LogContext* log_context = nullptr;  // the caller's, or null
  Status result = Ok();
  std::exception_ptr thrown;
};

class SqliteBatchRunner {
 public:
  explicit SqliteBatchRunner(SqliteConn& writer) : writer_(writer) {}

  // Runs `batch` in one transaction and sets each call's result; answers whether it
  // committed.
  bool Run(const std::vector<BatchCall*>& batch);

  uint64_t reruns() const { return reruns_.load(); }  // batches whose earlier calls ran again
  uint64_t savepoint_calls() const { return savepoint_calls_.load(); }

 private:
  static constexpr int kSavepointBatchesAfterFailure = 16;

  Status Begin();
  bool InTransaction();
  // One call, in its savepoint when `savepoint` (rolled back to it when the callback
  // fails or throws; without one, Run undoes a failed call's work).
  Status RunOne(BatchCall& call, bool savepoint);

  SqliteConn& writer_;
  int savepoint_batches_ = 0;
  std::atomic<uint64_t> reruns_{0};
  std::atomic<uint64_t> savepoint_calls_{0};
};

}  // namespace crmd::store

#include "src/store/sqlite_batch.h"

#include <sqlite3.h>

#include <cstddef>
#include <iterator>

#include "src/store/sqlite_conn.h"

namespace crmd::store {

// The batch's own statements go through the statement cache (Step): no parse per call.
Status SqliteBatchRunner::Begin() { return writer_.Step("BEGIN IMMEDIATE"); }
bool SqliteBatchRunner::InTransaction() { return !sqlite3_get_autocommit(writer_.raw()); }

bool SqliteBatchRunner::Run(const std::vector<BatchCall*>& batch) {
  bool savepoints = savepoint_batches_ > 0;
  if (savepoints) --savepoint_batches_;
  const std::vector<BatchCall*>* calls = &batch;
  std::vector<BatchCall*> again;  // after a rollback: the calls to run in savepoints
  std::vector<BatchCall*> in_tx;  // callbacks that succeeded in the open transaction
  Status began = Ok();
  bool open = false;
  for (size_t i = 0; i < calls->size(); ++i) {
    BatchCall* w = (*calls)[i];
    if (!open && began) {
      began = Begin();
      open = static_cast<bool>(began);
    }
    if (!began) {
      w->result = began;
      continue;
    }
    w->result = RunOne(*w, savepoints);
    if (!InTransaction()) {
      // SQLite rolled the whole transaction back: what ran in it is gone.
      Error lost{.code = Errc::kUnavailable,
                 .message = "the transaction was rolled back",
                 .detail = "sqlite rolled back a group commit batch"};
      for (auto* done : in_tx) done->result = Fail(lost);
      if (w->result) w->result = Fail(lost);
      in_tx.clear();
      open = false;
      continue;
    }
    if (w->result) {
      in_tx.push_back(w);
      continue;
    }
    if (savepoints) continue;  // rolled back to its savepoint, alone
    writer_.Step("ROLLBACK");
    open = false;
    if (in_tx.empty()) continue;  // nothing else was in the transaction
    ++reruns_;
    savepoint_batches_ = kSavepointBatchesAfterFailure;
    savepoints = true;
    // Once only: `calls` is still the batch (savepoints are on from here).
    again.reserve(in_tx.size() + calls->size() - i - 1);
    again.insert(again.end(), in_tx.begin(), in_tx.end());
    again.insert(again.end(), calls->begin() + static_cast<std::ptrdiff_t>(i) + 1, calls->end());
    calls = &again;
    in_tx.clear();
    i = static_cast<size_t>(-1);  // from the start of `again`
  }
  if (!open) {
    // Nothing to commit. A ROLLBACK above that failed (it does not in WAL mode, short of
    // a broken connection) left the transaction open, and Begin() then failed for the
    // calls after it: no transaction outlives its batch.
    if (InTransaction()) writer_.Step("ROLLBACK");
    return false;
  }
  if (auto c = writer_.Step("COMMIT"); !c) {
    c = Fail(Errc::kInternal, "internal error", c.error().detail);
    if (InTransaction()) writer_.Step("ROLLBACK");
    for (auto* w : in_tx) w->result = c;
    return false;
  }
  return true;
}

Status SqliteBatchRunner::RunOne(BatchCall& w, bool savepoint) {
  if (savepoint) {
    ++savepoint_calls_;
    if (auto sp = writer_.Step("SAVEPOINT crmd_write"); !sp) return sp;
  }
  Status st = Ok();
  w.thrown = nullptr;  // a call run again starts afresh
  try {
    if (w.log_context) {
      LogScope scope(*w.log_context);
      st = (*w.fn)(writer_);
      *w.log_context = std::move(scope.context());
    } else {
      st = (*w.fn)(writer_);
    }
  } catch (...) {
    w.thrown = std::current_exception();
    st = Fail(Errc::kInternal, "internal error", "exception in a write transaction");
  }
  if (!savepoint || !InTransaction()) return st;
  if (!st) writer_.Step("ROLLBACK TO crmd_write");
  if (auto rel = writer_.Step("RELEASE crmd_write"); !rel && st) return rel;
  return st;
}

}  // namespace crmd::store

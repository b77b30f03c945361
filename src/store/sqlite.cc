#include "src/store/sqlite.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "src/core/clock.h"
#include "src/core/log.h"
#include "src/core/worker_pool.h"
#include "src/store/sqlite_batch.h"
#include "src/store/sqlite_conn.h"
#include "src/store/sqlite_vfs.h"

namespace crmd::store {

namespace {
std::atomic<bool> g_fail_wal_syncs{false};  // FailWalSyncsForTesting
std::atomic<int> g_gather_max_us{300};      // SetGatherMaxForTesting
}  // namespace

void FailWalSyncsForTesting(bool fail) { g_fail_wal_syncs.store(fail); }
int SetGatherMaxForTesting(int microseconds) { return g_gather_max_us.exchange(microseconds); }

namespace {

// Group commit. Write() calls queue up; the first of them that finds no batch running
// becomes the leader: it takes every queued call (up to kMaxBatch; see Gather for how it
// may first wait for more), runs them one after the other on the writer connection
// inside one BEGIN IMMEDIATE .. COMMIT and commits once, so one fsync covers the whole
// batch. Calls that arrive meanwhile wait for the next batch,
// led by one of them.
//
// What each Write() keeps: its callback runs alone on the connection (serialisable, as
// before), sees the committed state plus the earlier calls of its batch, and its work is
// atomic: a callback that fails has its work undone, alone (src/store/sqlite_batch.h:
// the calls of the batch that ran before it in the transaction may run again). Nothing is
// acknowledged before the COMMIT that holds it has returned and the WAL has been fsynced
// after it (see SyncLoop); when the COMMIT fails, every call of the batch fails. If SQLite rolls
// the whole transaction back on its own (I/O error, disk full), the calls already run in it fail
// too and the rest of the batch goes on in a new transaction. The callback runs on the leader's
// thread, under the caller's log context (the outbox records its trace); an exception it
// throws is rethrown on the caller's thread.
class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(std::unique_ptr<SqliteConn> writer,
                 std::vector<std::unique_ptr<SqliteConn>> readers,
                 std::unique_ptr<SqliteConn> checkpointer, std::unique_ptr<SqliteConn> pin_conn)
      : writer_(std::move(writer)),
        readers_(std::move(readers)),
        checkpointer_(std::move(checkpointer)),
        pin_conn_(std::move(pin_conn)) {
    // The readers' slot of the WAL index stays locked between reads (sqlite_vfs.h); set
    // before the checkpoint thread, which lets it go when reads stop.
    if (pin_conn_) pin_ = ShmPin::Attach(pin_conn_->raw());
    for (auto& r : readers_) idle_.push_back(r.get());
    // Replaces SQLite's own checkpoint hook (sqlite3_wal_autocheckpoint): see OnWal.
    sqlite3_wal_hook(writer_->raw(), &SqliteDatabase::OnWal, this);
    checkpoint_thread_ = std::thread([this] { CheckpointLoop(); });
    const char* file = sqlite3_db_filename(writer_->raw(), "main");
    auto mode = writer_->QueryOne("PRAGMA journal_mode");
    // The WAL exists once the journal mode has been read (a read in WAL mode opens it).
    // The sync thread keeps its own descriptor of it; without one, the writer stays at
    // synchronous=FULL (its COMMIT syncs).
    if (file && *file && mode && *mode && (**mode).Str(0) == "wal") {
      wal_path_ = std::string(file) + "-wal";
      wal_fd_ = open(wal_path_.c_str(), O_RDWR | O_CLOEXEC);
      if (wal_fd_ >= 0 && writer_->ExecScript("PRAGMA synchronous=NORMAL;")) {
        sync_thread_ = std::thread([this] { SyncLoop(); });
      } else if (wal_fd_ >= 0) {
        close(wal_fd_);
        wal_fd_ = -1;
      }
    }
  }
  ~SqliteDatabase() override {
    {
      std::lock_guard lock(checkpoint_mu_);
      checkpoint_stop_ = true;
    }
    checkpoint_cv_.notify_one();
    checkpoint_thread_.join();
    if (sync_thread_.joinable()) {
      {
        std::lock_guard lock(sync_mu_);
        sync_stop_ = true;
      }
      sync_cv_.notify_one();
      sync_thread_.join();
    }
    pin_.reset();  // before any connection closes
    if (wal_fd_ >= 0) close(wal_fd_);
    // After a failed sync no connection checkpoints as it closes (the last one would copy
    // the WAL into the database file and delete it): the WAL stays for the recovery of the
    // next start, which keeps what reached the disk.
    if (sync_failed_.load()) {
      for (SqliteConn* c : {writer_.get(), checkpointer_.get(), pin_conn_.get()})
        if (c) sqlite3_db_config(c->raw(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
      for (auto& r : readers_)
        sqlite3_db_config(r->raw(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    }
  }
  Dialect dialect() const override { return Dialect::kSqlite; }

  // Also looks at the WAL itself, so that a WAL removed while no write comes shows at
  // once (an fstat; the descriptor stays open until the destructor).
  Status Writable() const override {
    if (!sync_failed_.load(std::memory_order_acquire)) {
      struct stat st {};
      if (wal_fd_ < 0 || (fstat(wal_fd_, &st) == 0 && st.st_nlink > 0)) return Ok();
    }
    return NotDurable();
  }

  SqliteWriteStats WriteStats() const {
    const ShmPin::Counts pins = pin_ ? pin_->counts() : ShmPin::Counts{};
    return {.commits = commits_.load(),
            .queued = queued_.load(),
            .background_checkpoints = background_checkpoints_.load(),
            .leader_checkpoints = leader_checkpoints_.load(),
            .handovers = handovers_.load(),
            .batch_reruns = batch_runner_.reruns(),
            .savepoint_calls = batch_runner_.savepoint_calls(),
            .syncs = syncs_.load(),
            .sync_skips = sync_skips_.load(),
            .gather_waits = gather_waits_.load(),
            .read_slot_pins = pins.pinned,
            .read_slot_releases = pins.released,
            .read_slot_idle_releases = pins.idle_released};
  }

 protected:
  Status RunRead(const std::function<Status(Conn&)>& fn) override {
    // The reader goes back to the pool however fn ends, an exception included (it ends
    // the read transaction first, so the next user does not start inside it).
    Reader reader(*this);
    Status st = reader.conn->Step("BEGIN");
    if (!st) return st;
    reader.in_transaction = true;
    return fn(*reader.conn);
  }

  // One statement in autocommit: SQLite gives it its own read transaction, from its first
  // step to its reset (SqliteConn::Run steps it to the end and resets it).
  Status RunReadStatement(const std::function<Status(Conn&)>& fn) override {
    Reader reader(*this);
    return fn(*reader.conn);
  }

  // A reader taken from the pool for a scope. Every reader in use: it waits as a blocked
  // handler, so that the handlers holding them can run (src/core/worker_pool.h).
  struct Reader {
    SqliteDatabase& db;
    SqliteConn* conn = nullptr;
    bool in_transaction = false;
    explicit Reader(SqliteDatabase& d) : db(d) {
      std::unique_lock lock(db.mu_);
      if (db.idle_.empty()) {
        BlockingRegion blocking;
        db.cv_.wait(lock, [&] { return !db.idle_.empty(); });
      }
      conn = db.idle_.back();
      db.idle_.pop_back();
    }
    ~Reader() {
      if (in_transaction) conn->Step("COMMIT");
      {
        std::lock_guard lock(db.mu_);
        db.idle_.push_back(conn);
      }
      db.cv_.notify_one();
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
  };

  Status RunWrite(const std::function<Status(Conn&)>& fn) override {
    // Once a sync of the WAL has failed, nothing more is committed (see SyncLoop).
    if (sync_failed_.load(std::memory_order_acquire)) return NotDurable();
    PendingWrite me;
    me.fn = &fn;
    me.log_context = CurrentLogContext();
    bool lead;
    {
      std::lock_guard lock(queue_mu_);
      // What may throw (an allocation) comes before any change the others could see.
      const bool new_batch = batches_.empty() || batches_.back()->writes.size() >= kMaxBatch;
      if (new_batch) {
        auto batch = std::make_unique<Batch>();
        batch->writes.reserve(16);
        batches_.push_back(std::move(batch));
      }
      try {
        batches_.back()->writes.push_back(&me);
      } catch (...) {
        if (new_batch) batches_.pop_back();
        throw;
      }
      // Invariant: no leader means no batch queued (a leader hands over to the head of
      // the next batch), so a writer that finds none leads, first in its own batch.
      lead = !leading_;
      leading_ = true;
      ++queued_;
    }
    if (!lead) {
      // On a handler's fiber its thread runs other handlers meanwhile, and their writes
      // join the next batch; on a plain thread this waits as a blocked handler
      // (src/core/worker_pool.h).
      me.wake.Wait();
      if (!me.lead) {
        if (me.thrown) std::rethrow_exception(me.thrown);
        return std::move(me.result);
      }
      // The last leader handed over: leading_ is still true, now for this writer, the
      // head of the batch at the front of the queue.
    }
    {
      // The leader runs batches holding its thread. On a plain pool thread another takes
      // its place meanwhile, as for any wait; on a fiber it counts as a running handler
      // (the other writers no longer need threads to wait on), except while it steps aside
      // to gather writers (Gather), when it counts as blocked.
      BlockingRegion blocking(!WorkerPool::OnFiber());
      // A leader that finds writers queued when its batch is committed leads their batch
      // too, up to kMaxLedInARow batches: it is running already, while a writer woken to
      // lead waits for a core behind the writers just woken.
      for (int led = 1;; ++led) {
        Gather();
        std::unique_ptr<Batch> batch;
        {
          std::lock_guard lock(queue_mu_);
          batch = std::move(batches_.front());
          batches_.pop_front();
          queued_ -= static_cast<int64_t>(batch->writes.size());
        }
        const Stopwatch began;
        if (sync_failed_.load(std::memory_order_acquire)) {
          for (BatchCall* w : batch->writes) w->result = NotDurable();
        } else {
          if (batch_runner_.Run(batch->writes)) ++commits_;
        }
        if (led == 1) batch->leader = &me;  // the head of the first batch it leads
        if (auto* h = metrics().group_commit_seconds) h->ObserveMicros(began.ElapsedMicros());
        PendingWrite* next = nullptr;
        bool again = false;
        {
          std::lock_guard lock(queue_mu_);
          if (batches_.empty())
            leading_ = false;
          else if (led < kMaxLedInARow)
            again = true;
          else
            next = static_cast<PendingWrite*>(batches_.front()->writes.front());
        }
        if (next) {
          ++handovers_;
          next->lead = true;
          next->wake.Notify();
        }
        // Committed, not yet durable: the sync thread answers the batch after its fsync,
        // while this leader (or the next) runs the next batch.
        Durable(std::move(batch));
        if (!again) break;
      }
    }
    me.synced.Wait();
    if (me.thrown) std::rethrow_exception(me.thrown);
    return std::move(me.result);
  }

 private:
  static constexpr size_t kMaxBatch = 256;
  static constexpr int kMaxLedInARow = 4;

  // One Write() call, on its caller's stack until it is answered. The leader and the sync
  // thread write `result`, `thrown` and `lead` before they notify (which orders them).
  struct PendingWrite : BatchCall {
    bool lead = false;  // told to lead the next batch
    Wakeup wake;        // answered, or told to lead
    Wakeup synced;      // a leader's own batch answered
  };
  struct Batch {
    std::vector<BatchCall*> writes;  // PendingWrites, appended to under queue_mu_ until taken
    PendingWrite* leader = nullptr;  // the writer of the batch that led it, if one did
  };

  // Gathering. A COMMIT writes about the same pages for one write as for twenty (the last
  // leaf of each table and index written, the counters), so a larger batch costs less a
  // write: in WAL frames, in pwrite calls and in syncs. Before it takes a batch of fewer
  // than kGatherTarget writes, a leader running on a worker pool whose queue holds tasks
  // (requests on their way, some of them writes) steps aside for kGatherStep, as a
  // blocked handler so that another thread runs them, and again until the queue is empty
  // or g_gather_max_us have passed. A leader whose pool has nothing queued (one client, a
  // lull, a job loop off the pool) does not wait, so a write alone is not delayed; one
  // whose queue holds reads only waits up to g_gather_max_us for nothing (its core serves
  // the reads meanwhile). Under a durable create_contact load this gathers about twice the
  // writes a batch (docs/performance.md). While the leader steps aside, the fibers of its
  // thread whose writes are answered wait for it too.
  static constexpr size_t kGatherTarget = 16;
  static constexpr auto kGatherStep = std::chrono::microseconds(50);

  void Gather() {
    if (sync_failed_.load(std::memory_order_acquire)) return;  // nothing will be committed
    const Stopwatch gathering;
    const std::chrono::nanoseconds most =
        std::chrono::microseconds(g_gather_max_us.load(std::memory_order_relaxed));
    while (true) {
      {
        std::lock_guard lock(queue_mu_);
        if (batches_.front()->writes.size() >= kGatherTarget) return;
      }
      const std::chrono::nanoseconds left = most - gathering.Elapsed();
      if (left <= std::chrono::nanoseconds::zero() || WorkerPool::QueuedHere() == 0) return;
      ++gather_waits_;
      BlockingRegion aside;
      std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(kGatherStep, left));
    }
  }

  // Hands a committed batch to the sync thread; without one (no WAL file: its COMMIT
  // synced already, if anything) answers it at once.
  void Durable(std::unique_ptr<Batch> batch) {
    if (!sync_thread_.joinable()) {
      Answer(*batch);
      return;
    }
    {
      std::lock_guard lock(sync_mu_);
      sync_queue_.push_back(std::move(batch));
    }
    sync_cv_.notify_one();
  }
  // A writer may return as soon as it is notified: nothing of it is touched after.
  static void Answer(const Batch& b) {
    for (BatchCall* call : b.writes) {
      auto* w = static_cast<PendingWrite*>(call);
      if (w == b.leader)
        w->synced.Notify();
      else
        w->wake.Notify();
    }
  }

  // The fsync of the WAL, one behind the commits. The writer connection runs with
  // synchronous=NORMAL: its COMMIT writes the batch's frames and returns; this thread
  // then fdatasyncs the WAL (every batch committed since its last one at once) and only
  // then answers their writers, while the leader runs the next batch. No write is
  // answered before it is on disk; another connection may read a batch's rows during
  // its fsync.
  //
  // A failed sync is final. Linux reports a writeback error once per descriptor and may
  // drop the pages it could not write, so a later sync that succeeds proves nothing about
  // them (PostgreSQL's data_sync_retry=off, for the same reason). The writes of that
  // round fail (their rows may be seen meanwhile: the COMMIT has run), and every later
  // Write() fails (a batch whose leader had not seen the failure yet may still be
  // committed, and is reported failed); no checkpoint runs any more, not even as the
  // connections close (see CheckpointLoop); reads go on, and /readyz reports the node
  // unavailable until crmd is restarted (SQLite's recovery then keeps what reached the
  // disk). The same holds when the WAL file has been removed: SQLite keeps writing to the
  // removed file, which nothing keeps past a crash, and reopening the path would sync a
  // file SQLite does not write to.
  void SyncLoop() {
    std::unique_lock lock(sync_mu_);
    while (true) {
      sync_cv_.wait(lock, [&] { return !sync_queue_.empty() || sync_stop_; });
      if (sync_queue_.empty()) return;
      std::vector<std::unique_ptr<Batch>> batches;
      batches.swap(sync_queue_);
      lock.unlock();
      // A round whose batches wrote nothing to the WAL (an idle job loop's lease query
      // that found nothing due: BEGIN IMMEDIATE .. COMMIT without a changed page) has
      // nothing to sync, unless another commit wrote frames since the last sync began: a
      // batch may read rows of an earlier one whose sync is still to come (leaders hand
      // over before they queue), so what counts is every commit of the connection, not
      // this round's. OnWal counts the commits that wrote frames, after their write().
      // Such a round still checks that the WAL file is there (no disk I/O), so that a
      // removed WAL fails every write from the next round on, as before.
      const uint64_t written = wal_commits_.load(std::memory_order_acquire);
      bool ok = !sync_failed_.load(std::memory_order_relaxed);
      if (ok && written == synced_commits_) {
        ok = SyncWal(/*data=*/false);
        ++sync_skips_;
      } else {
        ok = ok && SyncWal(/*data=*/true);
        if (ok) synced_commits_ = written;
        ++syncs_;
      }
      for (auto& b : batches) {
        if (!ok) {
          for (BatchCall* w : b->writes)
            if (w->result) w->result = NotDurable();
        }
        Answer(*b);
      }
      lock.lock();
    }
  }
  // One round's sync; the first also syncs the folder, so that the WAL file (created at
  // this start, maybe) is found after a power loss. Without `data`, only the checks that
  // do not touch the disk (the file is still there).
  bool SyncWal(bool data) {
    std::string failed;
    struct stat st {};
    if (fstat(wal_fd_, &st) != 0) {
      failed = std::string("fstat: ") + std::strerror(errno);
    } else if (st.st_nlink == 0) {
      failed = "the WAL file was removed";
    } else if (!data) {
      return true;
    } else if (g_fail_wal_syncs.load(std::memory_order_relaxed)) {
      failed = "fdatasync: failed for a test";
    } else if (fdatasync(wal_fd_) != 0) {
      failed = std::string("fdatasync: ") + std::strerror(errno);
    } else if (!folder_synced_) {
      const auto slash = wal_path_.rfind('/');
      const std::string folder = slash == std::string::npos ? "."
                                 : slash == 0               ? "/"
                                                            : wal_path_.substr(0, slash);
      const int dir = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir < 0 || fsync(dir) != 0)
        failed = std::string("fsync of the folder: ") + std::strerror(errno);
      if (dir >= 0) close(dir);
      folder_synced_ = failed.empty();
    }
    if (failed.empty()) return true;
    MarkNotDurable(failed);
    return false;
  }
  // Makes the failure final (see SyncLoop); the first one is logged.
  void MarkNotDurable(const std::string& detail) {
    if (sync_failed_.exchange(true, std::memory_order_acq_rel)) return;
    spdlog::error(
        R"("event":"sqlite_wal_sync_failed","file":"{}","detail":"{}","action":"writes are refused until crmd is restarted")",
        JsonEscape(wal_path_), JsonEscape(detail));
  }
  static Status NotDurable() {
    return Fail(Errc::kUnavailable, "the database cannot make writes durable",
                "a sync of the SQLite WAL failed; writes are refused until crmd is restarted");
  }

  // Checkpoints (copying the WAL into the database file, and its fsync). SQLite's own,
  // after a COMMIT that leaves 1000 pages or more in the WAL, ran on the group commit's
  // leader inside the single writer's turn, and the leader is the write path's
  // bottleneck (busy 85 % of the time under a create_contact load, docs/performance.md).
  // A thread of its own, with its own connection, now runs them (PASSIVE: it blocks no
  // writer or reader) when the WAL reaches kCheckpointPages. A passive checkpoint beside
  // ongoing writes may not reach the last frames, and the WAL starts again from its
  // beginning only after a checkpoint that reached them; so at kLeaderCheckpointPages the
  // leader also checkpoints after its commit, as SQLite did (little is left to copy by
  // then), which bounds the WAL.
  //
  // A background checkpoint is asked for each time the WAL has grown by kCheckpointPages
  // since the last one was asked for, not after every commit past the threshold. A
  // checkpoint that can copy anything sorts the page numbers of every frame from the first
  // frame of the WAL index segment (4,062 frames in the first, 4,096 in each other) that
  // holds the first frame not yet copied, up to the WAL's end (SQLite's walIteratorInit).
  // So checkpoints asked for after every commit ran back to back and re-sorted up to
  // 4,000 frames each, for the few pages the commits since the last one had written
  // (a large share of the instructions under a create_contact load; docs/performance.md). The cost
  // of asking less often: a background checkpoint rarely catches up with the WAL's end under steady
  // writes, so the leader's checkpoint at 4,000 pages, inside the writer's turn, runs more often (5
  // to 7 a second instead of 2 to 4 at 11,000 to 14,000 creates a second), while the database
  // file's fsyncs fall from 200 to 260 a second to about 12 (a checkpoint fsyncs it only when it
  // reached the WAL's end).
  static constexpr int kCheckpointPages = 1000;
  static constexpr int kLeaderCheckpointPages = 4000;

  // Called by SQLite on the writer connection after each COMMIT that wrote frames to the
  // WAL (none for a transaction that changed no page), once they are written.
  static int OnWal(void* self, sqlite3* db, const char* name, int pages) {
    auto* me = static_cast<SqliteDatabase*>(self);
    me->wal_commits_.fetch_add(1, std::memory_order_release);                // see SyncLoop
    if (me->sync_failed_.load(std::memory_order_acquire)) return SQLITE_OK;  // see CheckpointLoop
    // A WAL shorter than when a checkpoint was last asked for has started again from its
    // beginning. (A first commit after the restart that writes as many frames as the WAL
    // had then goes unnoticed and its ask is late by up to kCheckpointPages; the quiet
    // second below, and the leader's checkpoint, still bound the WAL.)
    if (pages < me->checkpoint_asked_at_) me->checkpoint_asked_at_ = 0;
    me->wal_pages_.store(pages, std::memory_order_relaxed);
    if (pages >= kLeaderCheckpointPages) {
      // Copying pages and syncing the database file: on a fiber the leader's thread would
      // wait with its core.
      BlockingRegion blocking;
      sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      ++me->leader_checkpoints_;
    } else if (pages - me->checkpoint_asked_at_ >= kCheckpointPages) {
      me->checkpoint_asked_at_ = pages;
      bool notify = false;
      {
        std::lock_guard lock(me->checkpoint_mu_);
        notify = !me->checkpoint_wanted_;
        me->checkpoint_wanted_ = true;
      }
      if (notify) me->checkpoint_cv_.notify_one();
    }
    return SQLITE_OK;
  }

  void CheckpointLoop() {
    std::unique_lock lock(checkpoint_mu_);
    while (true) {
      // Every second without a checkpoint to run, the pin lets its slot go if nothing
      // read meanwhile (sqlite_vfs.h): an idle node holds no read lock.
      if (!checkpoint_cv_.wait_for(lock, std::chrono::seconds(1),
                                   [&] { return checkpoint_wanted_ || checkpoint_stop_; })) {
        if (pin_) {
          lock.unlock();  // the pin's own mutex is not taken under this one
          pin_->ReleaseIfIdle();
          lock.lock();
        }
        // A quiet second, a WAL of kCheckpointPages or more, and commits since the last
        // checkpoint that asked for none (OnWal asks once per kCheckpointPages of growth),
        // or a last checkpoint that did not reach the WAL's end (a reader held an older
        // snapshot): one more, as SQLite's own hook would have run after the last commit,
        // so that a WAL whose writes stopped between two asks is not left long. While
        // nothing can be copied, a checkpoint sorts nothing and returns.
        if (checkpoint_stop_ || wal_pages_.load(std::memory_order_relaxed) < kCheckpointPages ||
            (wal_commits_.load(std::memory_order_acquire) == checkpointed_commits_ &&
             checkpoint_reached_end_))
          continue;
      }
      if (checkpoint_stop_) return;
      checkpoint_wanted_ = false;
      checkpointed_commits_ = wal_commits_.load(std::memory_order_acquire);
      // No checkpoint after a failed sync: this connection's descriptor of the WAL may not
      // have been told of the error yet (Linux tells each once), and a checkpoint would
      // copy into the database file frames the kernel may have dropped. A checkpoint that
      // fails on I/O makes the failure final in the same way.
      if (sync_failed_.load(std::memory_order_acquire)) continue;
      lock.unlock();
      int log_frames = -1, copied_frames = -1;
      const int rc = sqlite3_wal_checkpoint_v2(
          checkpointer_->raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_frames, &copied_frames);
      checkpoint_reached_end_ = rc != SQLITE_OK || copied_frames >= log_frames;
      if ((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_FULL)
        MarkNotDurable(std::string("checkpoint: ") + sqlite3_errstr(rc));
      ++background_checkpoints_;
      lock.lock();
    }
  }

  std::unique_ptr<SqliteConn> writer_;        // used by the batch leader only
  SqliteBatchRunner batch_runner_{*writer_};  // the leader's, on writer_
  int checkpoint_asked_at_ = 0;               // OnWal's (the writer's): the WAL's length then
  std::atomic<int> wal_pages_{0};             // the WAL's length after the last commit (OnWal)
  std::mutex queue_mu_;
  std::deque<std::unique_ptr<Batch>> batches_;  // the last one takes new writers
  bool leading_ = false;                        // a leader is running a batch
  std::atomic<int64_t> queued_{0};
  std::atomic<uint64_t> commits_{0};
  std::vector<std::unique_ptr<SqliteConn>> readers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<SqliteConn*> idle_;
  std::unique_ptr<SqliteConn> checkpointer_;  // used by checkpoint_thread_ only
  std::unique_ptr<SqliteConn> pin_conn_;      // holds pin_'s lock, runs nothing (sqlite_vfs.h)
  std::unique_ptr<ShmPin> pin_;               // null: not in WAL mode
  std::mutex checkpoint_mu_;
  std::condition_variable checkpoint_cv_;
  bool checkpoint_wanted_ = false;  // guarded by checkpoint_mu_
  bool checkpoint_stop_ = false;    // guarded by checkpoint_mu_
  uint64_t checkpointed_commits_ =
      0;  // the checkpoint thread's: wal_commits_ at its last checkpoint
  bool checkpoint_reached_end_ =
      true;  // the checkpoint thread's: its last one copied the whole WAL
  std::atomic<uint64_t> background_checkpoints_{0};
  std::atomic<uint64_t> leader_checkpoints_{0};
  std::atomic<uint64_t> handovers_{0};
  std::atomic<uint64_t> syncs_{0};
  std::atomic<uint64_t> sync_skips_{0};   // rounds with nothing new in the WAL to sync
  std::atomic<uint64_t> wal_commits_{0};  // the writer's COMMITs that wrote frames (OnWal)
  // The sync thread's: the wal_commits_ its last sync covers. None at first, so the first
  // round syncs whatever it holds: a WAL left by a process killed between a COMMIT and its
  // sync has frames that no sync of that process covered, and recovery makes their rows
  // visible (found by an independent review).
  uint64_t synced_commits_ = std::numeric_limits<uint64_t>::max();
  std::atomic<uint64_t> gather_waits_{0};
  std::string wal_path_;
  int wal_fd_ = -1;                       // the sync thread's
  bool folder_synced_ = false;            // the sync thread's
  std::atomic<bool> sync_failed_{false};  // final (see SyncLoop)
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  std::vector<std::unique_ptr<Batch>> sync_queue_;  // guarded by sync_mu_
  bool sync_stop_ = false;                          // guarded by sync_mu_
  std::thread checkpoint_thread_;                   // last: started after every member above exists
  std::thread sync_thread_;
};

}  // namespace

SqliteWriteStats WriteStats(const Database& db) {
  auto* sqlite = dynamic_cast<const SqliteDatabase*>(&db);
  return sqlite ? sqlite->WriteStats() : SqliteWriteStats{};
}

std::optional<SqliteWriteStats> SqliteStatsOf(const Database& db) {
  auto* sqlite = dynamic_cast<const SqliteDatabase*>(&db);
  if (!sqlite) return std::nullopt;
  return sqlite->WriteStats();
}

Result<std::unique_ptr<Database>> OpenSqlite(const std::string& path, int readers) {
  auto writer = OpenConn(path, false);
  if (!writer) return Fail(writer.error());
  std::vector<std::unique_ptr<SqliteConn>> pool;
  for (int i = 0; i < std::max(1, readers); ++i) {
    auto r = OpenConn(path, false);
    if (!r) return Fail(r.error());
    pool.push_back(std::move(*r));
  }
  auto checkpointer = OpenConn(path, false);
  if (!checkpointer) return Fail(checkpointer.error());
  auto pin = OpenConn(path, false);
  if (!pin) return Fail(pin.error());
  return std::unique_ptr<Database>(new SqliteDatabase(std::move(*writer), std::move(pool),
                                                      std::move(*checkpointer), std::move(*pin)));
}

}  // namespace crmd::store

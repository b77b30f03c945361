#pragma once
// The handler threads: a pool of which at most `runners` threads run tasks at once (as
// many as the machine has cores), while up to `max_threads` exist. A task that waits for
// something outside the process (a group commit's fsync, a PostgreSQL answer) says so
// with a BlockingRegion; while it waits, another thread of the pool takes its place, and
// when it is back it finishes its task (the pool may then briefly run more than
// `runners`).
//
// Why: with one plain pool, the thread count was a trade-off (docs/performance.md). Few
// threads kept reads fast (no runnable threads beyond the cores, no context switches
// between handlers) but let only that many writers wait on a commit at once, so group
// commit batches stayed small; many threads batched writes and slowed reads by a third.
// Here reads see `runners` threads and writes wait `max_threads` at a time.
//
// A thread is woken only when it can run: Post() and a task entering a BlockingRegion
// wake at most one waiting thread, and a thread that finishes a task takes the next one
// without sleeping.
// (An idle thread spinning 50 us on the queue before sleeping was tried and made every
// row slower on two cores: the spinner took CPU from the I/O thread.) Threads are started as they are first needed and live until Join().
//
// Thread-safe.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace crmd {

class WorkerPool {
 public:
  // A move-only callable (a coroutine's completion handler is move-only).
  class Task {
   public:
    Task() = default;
    template <typename F>
    Task(F f) : impl_(std::make_unique<Impl<F>>(std::move(f))) {}  // NOLINT: implicit
    void operator()() { impl_->Run(); }
    explicit operator bool() const { return impl_ != nullptr; }

   private:
    struct Base {
      virtual ~Base() = default;
      virtual void Run() = 0;
    };
    template <typename F>
    struct Impl final : Base {
      explicit Impl(F fn) : f(std::move(fn)) {}
      void Run() override { f(); }
      F f;
    };
    std::unique_ptr<Base> impl_;
  };

  // REQUIRES: 1 <= runners <= max_threads.
  WorkerPool(int runners, int max_threads);
  ~WorkerPool();  // Join()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`. After Join() has begun, the task runs on the caller's thread.
  void Post(Task task);
  // Runs what is queued, then ends every thread. Idempotent; not from a pool thread.
  void Join();

  struct Stats {
    int threads = 0;   // started
    int running = 0;   // running a task outside a BlockingRegion
    int blocked = 0;   // in a BlockingRegion
    size_t queued = 0;
  };
  Stats stats() const;
  int runners() const { return runners_; }
  int max_threads() const { return max_threads_; }

  // A default for `runners` and I/O threads: the cores this process may use, its CPU
  // affinity lowered by a cgroup CPU bandwidth limit (src/core/cpu_quota.h); at least 1.
  static int Cores();

 private:
  friend class BlockingRegion;
  void Loop();
  void Enter() noexcept;
  void Leave() noexcept;
  // Wakes a waiting thread, or starts one, if a queued task could run now. REQUIRES: mu_
  // held; returns whether to notify one waiter once mu_ is released.
  bool WakeOneLocked();

  const int runners_;
  const int max_threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  std::vector<std::thread> threads_;
  int idle_ = 0;      // threads waiting on cv_
  int starting_ = 0;  // threads started that have not reached Loop() yet
  int running_ = 0;
  int blocked_ = 0;
  bool stopping_ = false;
};

// For its lifetime, marks the current thread as waiting outside the process. On a
// WorkerPool thread another thread may run meanwhile; on any other thread it does
// nothing. Nested regions count once.
class BlockingRegion {
 public:
  explicit BlockingRegion(bool blocking = true);
  ~BlockingRegion();
  BlockingRegion(const BlockingRegion&) = delete;
  BlockingRegion& operator=(const BlockingRegion&) = delete;

 private:
  WorkerPool* pool_ = nullptr;  // set by the outermost region on a pool thread
  bool counted_ = false;
};

}  // namespace crmd

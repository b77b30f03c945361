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
// row slower on two cores: the spinner took CPU from the I/O thread.) Threads are started as they
// are first needed and live until Join().
//
// Fibers: each task runs on a fiber of its own (Boost.Context, a stack from the thread's
// cache) so that a task waiting on a Wakeup (a write waiting for its group commit) does
// not hold its thread: the fiber is suspended and the thread runs the next task, or a
// fiber whose Wakeup has come. A suspended fiber is resumed on the thread that started
// it, so thread_local state stays the thread's; the thread's log context and its
// BlockingRegion depth are kept per fiber across a suspension. On a write-heavy load this
// takes the thread hand-offs (a park, a wake-up and a switch per write, the largest part
// of a durable create_contact on a paravirtualised two-core machine) off the write path
// (docs/performance.md). A task must not hold a mutex while it waits on a Wakeup (another
// fiber of its thread could wait for it). Since only its own thread resumes a fiber, a
// thread never sleeps on a Wakeup while fibers of its own wait: on a fiber a Wait()
// suspends, inside a BlockingRegion too, and a task refused a stack runs on the thread's
// own only when no fiber of the thread waits (else it goes back to the queue, for another
// thread; so a task must not wait for a task posted after it, which at max_threads could
// find no thread to run on). Builds with
// ThreadSanitizer or MemorySanitizer run tasks on the thread's own stack, as before
// (AddressSanitizer is told of every switch).
//
// Thread-safe.
#include <atomic>
#include <cstddef>
#include <cstdint>
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

  // REQUIRES: 1 <= runners <= max_threads. `fibers`: run tasks on fibers (see above);
  // ignored (false) where FibersSupported() is not.
  WorkerPool(int runners, int max_threads, bool fibers = true);
  ~WorkerPool();  // Join()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`. After Join() has begun, the task runs on the caller's thread.
  void Post(Task task);
  // Runs what is queued, then ends every thread. Idempotent; not from a pool thread.
  void Join();

  struct Stats {
    int threads = 0;  // started
    int running = 0;  // running a task outside a BlockingRegion
    int blocked = 0;  // in a BlockingRegion
    size_t queued = 0;
  };
  Stats stats() const;
  int runners() const { return runners_; }
  int max_threads() const { return max_threads_; }

  // A default for `runners` and I/O threads: the cores this process may use, its CPU
  // affinity lowered by a cgroup CPU bandwidth limit (src/core/cpu_quota.h); at least 1.
  static int Cores();
  // False in builds with a sanitizer (their stacks and shadow state know no fibers).
  static bool FibersSupported();
  bool fibers() const { return fibers_; }
  // Whether the caller runs on a fiber of a pool (where a Wakeup suspends it).
  static bool OnFiber();
  // How many tasks wait in the queue of the pool the caller runs on (0 off a pool): a
  // snapshot, taken under the pool's lock (so not from inside the pool itself).
  static size_t QueuedHere();
  // Tests: while set, a fiber that needs a new stack (none cached) is refused one, as when
  // mmap fails.
  static void FailNewStacksForTesting(bool fail);

  struct Fiber;
  struct Slot;

 private:
  friend class BlockingRegion;
  friend class Wakeup;
  void Loop(Slot& slot);
  void Enter() noexcept;
  void Leave() noexcept;
  // Wakes a waiting thread, or starts one, if a queued task could run now. REQUIRES: mu_
  // held.
  void WakeOneLocked();
  void WakeAllLocked();
  // Makes `slot` leave its wait: marks it, and leaves the wake-up itself to FlushWakes().
  // REQUIRES: mu_ held.
  void WakeLocked(Slot& slot);
  // Wakes the slots this thread marked in WakeLocked(), of any pool. REQUIRES: no pool's
  // mu_ held.
  static void FlushWakes();
  // Runs `task` on a new fiber of `slot` until it ends or waits; without a stack, on the
  // thread's own or (when fibers of the thread wait) back to the queue. Answers whether
  // the caller still counts the task as running (false: suspended inside a
  // BlockingRegion, counted blocked, or requeued).
  bool Start(Slot& slot, Task& task);
  // Runs `fiber` until it ends or waits again; answers as Start().
  bool Resume(Slot& slot, Fiber* fiber);
  // Queues `fiber` to be resumed by its thread (any thread may call it).
  void Ready(Fiber* fiber);

  const int runners_;
  const int max_threads_;
  const bool fibers_;
  mutable std::mutex mu_;
  std::deque<Task> queue_;
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<Slot>> slots_;  // one per thread, kept until the pool ends
  std::vector<Slot*> idle_;                   // threads waiting for work
  int waking_ = 0;    // threads woken (out of idle_) that are not back in their loop yet
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

// A one-shot event: Wait() returns once Notify() has been called, before or after it. On a
// WorkerPool fiber Wait() suspends the fiber, and its thread runs other tasks meanwhile
// (inside a BlockingRegion the fiber stays counted blocked); elsewhere it sleeps on a
// futex, inside a BlockingRegion.
// Notify() is called once, from any thread; the Wakeup may be destroyed as soon as Wait()
// has returned.
class Wakeup {
 public:
  void Wait();
  void Notify();

 private:
  static constexpr uint32_t kIdle = 0, kNotified = 1, kParked = 2, kSleeping = 3;
  std::atomic<uint32_t> state_{kIdle};
  WorkerPool::Fiber* fiber_ = nullptr;  // set before kParked is published
};

}  // namespace crmd

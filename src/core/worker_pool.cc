#include "src/core/worker_pool.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <cassert>
#include <climits>
#include <new>
#include <system_error>

#include "src/core/cpu_quota.h"
#include "src/core/log.h"

// ThreadSanitizer and MemorySanitizer know no fibers here: tasks run on their threads.
// AddressSanitizer is told of every switch (its stack bounds and fake stacks).
#if defined(__SANITIZE_THREAD__)
#define CRMD_NO_FIBERS 1
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CRMD_ASAN 1
#endif
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define CRMD_NO_FIBERS 1
#endif
#if __has_feature(address_sanitizer)
#define CRMD_ASAN 1
#endif
#endif
#ifdef CRMD_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define CRMD_START_SWITCH(save, bottom, size) __sanitizer_start_switch_fiber(save, bottom, size)
#define CRMD_FINISH_SWITCH(save, bottom, size) __sanitizer_finish_switch_fiber(save, bottom, size)
#else
#define CRMD_START_SWITCH(save, bottom, size) ((void)0)
#define CRMD_FINISH_SWITCH(save, bottom, size) ((void)0)
#endif

namespace crmd {

namespace bctx = boost::context;

// A task's fiber. Touched by its own thread only, but for the Wakeup that readies it.
struct WorkerPool::Fiber {
  Slot* slot = nullptr;
  Task task;
  bctx::fiber self;                   // the suspended fiber, on the thread's side
  bctx::fiber caller;                 // the thread's loop, on the fiber's side
  LogContext* log_context = nullptr;  // the fiber's, while it is suspended
  int blocking_depth = 0;             // likewise
  bool done = false;
  bool in_region = false;  // suspended inside a BlockingRegion (counted blocked, not running)
  const void* stack_bottom = nullptr;  // for AddressSanitizer
  size_t stack_size = 0;
  void* fake_stack = nullptr;
};

// One pool thread: its wait, the fibers ready to resume on it (under the pool's mu_) and
// its cache of fiber stacks (its own).
struct WorkerPool::Slot {
  WorkerPool* pool = nullptr;
  // The thread's wait, a futex word: kSlotAwake, kSlotSleeping (in FutexWait), kSlotWoken.
  std::atomic<uint32_t> wake{0};
  // The next slot marked by the same waker (t_wakes). Written by the waker under mu_, read
  // by it before it wakes this slot: until then the slot cannot be marked again.
  Slot* next_wake = nullptr;
  std::deque<Fiber*> ready;  // guarded by mu_
  bool waiting = false;      // waiting for WakeLocked(), guarded by mu_
  bool in_idle = false;      // ... and in the pool's idle_ (not when starved), guarded by mu_
  // No stack for a new fiber while fibers of this thread wait: it takes no queued task
  // until one of them ends (its stack then is free). Its own thread's only.
  bool starved = false;
  Fiber* current = nullptr;  // the fiber running on this thread
  int suspended = 0;         // fibers of this thread waiting on a Wakeup
  std::vector<bctx::stack_context> stacks;
  bctx::stack_context last_stack;             // the stack allocated last (for Start)
  const void* thread_stack_bottom = nullptr;  // the thread's own, for AddressSanitizer
  size_t thread_stack_size = 0;
  void* fake_stack = nullptr;
  ~Slot() {
    for (auto& sc : stacks) FreeStack(sc);
  }
  // A fiber's stack: 1 MiB (a thread's is 8; the deepest handler path, the JSON parser at
  // its depth limit, uses far less), below a guard page; pages are touched as used.
  static constexpr size_t kStack = 1 << 20;
  static constexpr size_t kKeep = 256;
  static size_t Page() {
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return page;
  }
  static void FreeStack(bctx::stack_context& sc) {
    munmap(static_cast<char*>(sc.sp) - sc.size - Page(), sc.size + Page());
  }
};

namespace {
thread_local WorkerPool* t_pool = nullptr;        // the pool this thread belongs to, if any
thread_local WorkerPool::Slot* t_slot = nullptr;  // its slot, when the pool runs fibers
thread_local int t_blocking_depth = 0;
std::atomic<bool> g_fail_new_stacks{false};  // FailNewStacksForTesting

// Boost.Context's stack allocator over a slot's cache.
struct SlotStacks {
  WorkerPool::Slot* slot;
  bctx::stack_context allocate() {
    if (!slot->stacks.empty()) {
      bctx::stack_context sc = slot->stacks.back();
      slot->stacks.pop_back();
#ifdef CRMD_ASAN
      // Frames an earlier fiber left without returning (Boost.Context's entry, which ends
      // by a jump) keep their redzones poisoned; the next fiber's frames need not lie
      // where they lay. A fresh mapping's shadow is clean, so a reused one is made so.
      __asan_unpoison_memory_region(static_cast<char*>(sc.sp) - sc.size, sc.size);
#endif
      slot->last_stack = sc;
      return sc;
    }
    if (g_fail_new_stacks.load(std::memory_order_relaxed)) throw std::bad_alloc();
    const size_t page = WorkerPool::Slot::Page();
    const size_t size = WorkerPool::Slot::kStack;
    void* base = mmap(nullptr, size + page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    mprotect(base, page, PROT_NONE);  // the guard: an overflow faults instead of writing on
    bctx::stack_context sc;
    sc.size = size;
    sc.sp = static_cast<char*>(base) + page + size;
    slot->last_stack = sc;
    return sc;
  }
  void deallocate(bctx::stack_context& sc) noexcept {
    if (slot->stacks.size() < WorkerPool::Slot::kKeep) {
      try {
        slot->stacks.push_back(sc);
        return;
      } catch (...) {
      }
    }
    WorkerPool::Slot::FreeStack(sc);
  }
};

void FutexWait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}
void FutexWake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

constexpr uint32_t kSlotAwake = 0, kSlotSleeping = 1, kSlotWoken = 2;

// Slots that WakeLocked() told to leave their wait, to be woken by this thread once it no
// longer holds the pool's mu_ (FlushWakes): a list through Slot::next_wake, so marking
// allocates nothing and cannot fail, and the thread-local needs no destructor. Woken under
// the lock, a thread on the other core ran at once into the lock its waker still held: two
// more futex calls and, often, two more context switches per hand-off.
thread_local WorkerPool::Slot* t_wakes = nullptr;

void WaitForWake(WorkerPool::Slot& slot) {
  uint32_t expected = kSlotAwake;
  if (slot.wake.compare_exchange_strong(expected, kSlotSleeping, std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
    while (slot.wake.load(std::memory_order_acquire) == kSlotSleeping)
      FutexWait(slot.wake, kSlotSleeping);
  }
}

// Suspends the running fiber until Ready() resumes it. On a fiber of t_slot only.
void Suspend() {
  WorkerPool::Slot* slot = t_slot;
  WorkerPool::Fiber* f = slot->current;
  f->log_context = ExchangeCurrentLogContext(nullptr);
  f->blocking_depth = std::exchange(t_blocking_depth, 0);
  f->in_region = f->blocking_depth > 0;
  ++slot->suspended;
  CRMD_START_SWITCH(&f->fake_stack, slot->thread_stack_bottom, slot->thread_stack_size);
  f->caller = std::move(f->caller).resume();
  CRMD_FINISH_SWITCH(f->fake_stack, &slot->thread_stack_bottom, &slot->thread_stack_size);
  // Back, on the same thread (a fiber is resumed by its own thread only).
  --slot->suspended;
  ExchangeCurrentLogContext(f->log_context);
  t_blocking_depth = f->blocking_depth;
}
}  // namespace

bool WorkerPool::FibersSupported() {
#ifdef CRMD_NO_FIBERS
  return false;
#else
  return true;
#endif
}

int WorkerPool::Cores() {
  // The CPUs this process may run on (a cpuset or taskset narrows them), else the
  // machine's; fewer when a cgroup's CPU bandwidth limit allows fewer (a container's
  // --cpus, systemd's CPUQuota=). Read once: the defaults it feeds are set at start.
  static const int cores = [] {
    int n = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
    if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
    if (int limit = ProcessCpuLimit(); limit > 0 && (n <= 0 || limit < n)) n = limit;
    return std::max(1, n);
  }();
  return cores;
}

bool WorkerPool::OnFiber() { return t_slot && t_slot->current; }

size_t WorkerPool::QueuedHere() {
  if (!t_pool) return 0;
  std::lock_guard lock(t_pool->mu_);
  return t_pool->queue_.size();
}

WorkerPool::WorkerPool(int runners, int max_threads, bool fibers)
    : runners_(std::max(1, runners)),
      max_threads_(std::max(std::max(1, runners), max_threads)),
      fibers_(fibers && FibersSupported()) {
  threads_.reserve(static_cast<size_t>(max_threads_));
  slots_.reserve(static_cast<size_t>(max_threads_));
}

WorkerPool::~WorkerPool() { Join(); }

void WorkerPool::WakeLocked(Slot& slot) {
  if (!slot.waiting) return;
  slot.waiting = false;
  if (slot.in_idle) {
    slot.in_idle = false;
    ++waking_;
    idle_.erase(std::find(idle_.begin(), idle_.end(), &slot));
  }
  // Woken once the caller has let go of mu_ (FlushWakes). A slot is marked at most once
  // per wait (`waiting` is false from here on), so it is on one list at a time.
  slot.next_wake = t_wakes;
  t_wakes = &slot;
}

void WorkerPool::FlushWakes() {
  Slot* slot = std::exchange(t_wakes, nullptr);
  while (slot) {
    // Read before the wake-up: once woken, the slot may wait again and be marked anew,
    // and once its pool has joined the slot may be gone (the futex call below needs only
    // the word's address; at worst it wakes a later user of that memory spuriously).
    Slot* next = slot->next_wake;
    std::atomic<uint32_t>* word = &slot->wake;
    if (word->exchange(kSlotWoken, std::memory_order_acq_rel) == kSlotSleeping) FutexWake(*word);
    slot = next;
  }
}

void WorkerPool::WakeAllLocked() {
  while (!idle_.empty()) WakeLocked(*idle_.back());
}

void WorkerPool::WakeOneLocked() {
  if (queue_.empty() || running_ >= runners_) return;
  if (!idle_.empty()) {
    // A woken thread that finds nothing to do waits again.
    WakeLocked(*idle_.back());
    return;
  }
  // A thread woken and not yet back in its loop takes the task once it is (or, woken for
  // a ready fiber, wakes another for it then): no thread is started for it. Without this, a
  // Post() between a Wakeup's wake-up and the woken thread's return started one, and
  // under a write load the pool grew to dozens of threads, the fibers spread over them.
  if (waking_ > 0) return;
  // One thread starting at a time: it wakes or starts the next itself if work is left
  // (Loop), so a burst of posts does not start a thread per post.
  if (starting_ == 0 && static_cast<int>(threads_.size()) < max_threads_ && !stopping_) {
    try {
      slots_.push_back(std::make_unique<Slot>());
      Slot* slot = slots_.back().get();
      slot->pool = this;
      threads_.emplace_back([this, slot] { Loop(*slot); });
      ++starting_;  // Loop() decrements it under mu_, which this thread holds
    } catch (const std::exception&) {
      // No thread could be started (a process or container limit): the threads there are
      // carry on; the next wake-up tries again.
    }
  }
}

void WorkerPool::Post(Task task) {
  {
    std::lock_guard lock(mu_);
    if (!(stopping_ && threads_.empty())) {
      queue_.push_back(std::move(task));
      task = Task();
      WakeOneLocked();
    }
  }
  FlushWakes();
  if (task) task();  // the pool has been joined: run it here
}

void WorkerPool::Loop(Slot& slot) {
  t_pool = this;
  if (fibers_) t_slot = &slot;
  std::unique_lock lock(mu_);
  --starting_;
  // Joining does not lift the runner limit: the queue drains at the usual pace. A thread
  // ends only once its own suspended fibers have ended.
  while (true) {
    if (!slot.ready.empty()) {
      // A fiber whose Wakeup came: it finishes its task, whatever the runner limit (as a
      // thread back from a BlockingRegion does).
      // One suspended inside a BlockingRegion is counted blocked until it leaves it.
      Fiber* f = slot.ready.front();
      slot.ready.pop_front();
      const bool counted = !f->in_region;
      if (counted) ++running_;
      // A task posted while this thread was on its way here (waking_) runs beside the
      // fiber if a runner is free: the fiber may run for long (a group commit leader).
      WakeOneLocked();
      lock.unlock();
      FlushWakes();
      const bool still_running = Resume(slot, f);
      lock.lock();
      if (still_running) --running_;
      if (stopping_ && queue_.empty()) WakeAllLocked();
      continue;
    }
    if (!queue_.empty() && running_ < runners_ && !slot.starved) {
      Task task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
      // More queued than running: bring the next thread in (a burst starts threads one by
      // one until `runners_` run).
      WakeOneLocked();
      lock.unlock();
      FlushWakes();
      bool still_running = true;
      if (fibers_) {
        still_running = Start(slot, task);
      } else {
        task();
      }
      task = Task();  // destroyed outside the lock
      lock.lock();
      if (still_running) --running_;
      if (stopping_ && queue_.empty()) WakeAllLocked();  // the waiting threads may end
      continue;
    }
    if (stopping_ && queue_.empty() && slot.suspended == 0) {
      lock.unlock();
      FlushWakes();
      return;
    }
    // A starved thread waits for its own fibers only: out of idle_, it is not woken for
    // queued tasks it would not take.
    slot.waiting = true;
    slot.in_idle = !slot.starved;
    if (slot.in_idle) idle_.push_back(&slot);
    const bool was_idle = slot.in_idle;
    // Until WakeLocked(): work, a ready fiber, or Join(). The word is reset under mu_,
    // so a waker's kSlotWoken (written after it marked the slot under mu_) comes after it;
    // a futex wake-up that arrives late only makes WaitForWake look at the word again.
    while (slot.waiting) {
      slot.wake.store(kSlotAwake, std::memory_order_relaxed);
      lock.unlock();
      FlushWakes();
      WaitForWake(slot);
      lock.lock();
    }
    if (was_idle) --waking_;
  }
}

bool WorkerPool::Start(Slot& slot, Task& task) {
  auto* f = new Fiber;
  f->slot = &slot;
  f->task = std::move(task);
  try {
    f->self = bctx::fiber(std::allocator_arg, SlotStacks{&slot}, [f](bctx::fiber&& caller) {
      Slot* slot = f->slot;
      (void)slot;  // used by AddressSanitizer builds only
      CRMD_FINISH_SWITCH(nullptr, &slot->thread_stack_bottom, &slot->thread_stack_size);
      f->caller = std::move(caller);
      f->task();
      f->task = Task();
      f->done = true;
      CRMD_START_SWITCH(nullptr, slot->thread_stack_bottom, slot->thread_stack_size);  // ends
      return std::move(f->caller);
    });
    f->stack_bottom = static_cast<char*>(slot.last_stack.sp) - slot.last_stack.size;
    f->stack_size = slot.last_stack.size;
  } catch (...) {
    // No stack (mmap failed: memory, or the process's map count).
    task = std::move(f->task);
    delete f;
    if (slot.suspended == 0) {
      // No fiber of this thread waits, so none can be what the task waits for: it runs
      // on the thread's own stack, as without fibers.
      task();
      return true;
    }
    // Run here, the task could block the thread (a Wakeup off a fiber sleeps) while a
    // suspended fiber of this thread, which only this thread can resume, is what it waits
    // for (told to lead a group commit, say): a hang. Back to the queue, for another thread;
    // this one takes no new task until one of its fibers ends.
    {
      std::lock_guard lock(mu_);
      slot.starved = true;
      queue_.push_front(std::move(task));
      --running_;
      WakeOneLocked();
    }
    FlushWakes();
    return false;
  }
  return Resume(slot, f);
}

bool WorkerPool::Resume(Slot& slot, Fiber* f) {
  slot.current = f;
  CRMD_START_SWITCH(&slot.fake_stack, f->stack_bottom, f->stack_size);
  f->self = std::move(f->self).resume();
  CRMD_FINISH_SWITCH(slot.fake_stack, nullptr, nullptr);
  slot.current = nullptr;
  // The fiber ended, or waits (Suspend took its thread-local state with it).
  if (f->done) {
    delete f;  // its stack is back in the cache
    slot.starved = false;
    return true;
  }
  return !f->in_region;
}

void WorkerPool::Ready(Fiber* f) {
  Slot& slot = *f->slot;
  {
    std::lock_guard lock(mu_);
    slot.ready.push_back(f);
    WakeLocked(slot);
  }
  FlushWakes();
}

void WorkerPool::Join() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    WakeAllLocked();
  }
  FlushWakes();
  // No thread is started once stopping_ is set, so threads_ no longer grows.
  {
    std::lock_guard lock(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) {
    assert(t.get_id() != std::this_thread::get_id());
    if (t.joinable()) t.join();
  }
  // A task posted between the swap and the joins is in the queue with no thread left.
  std::deque<Task> rest;
  {
    std::lock_guard lock(mu_);
    rest.swap(queue_);
  }
  for (auto& t : rest) t();
}

WorkerPool::Stats WorkerPool::stats() const {
  std::lock_guard lock(mu_);
  return {.threads = static_cast<int>(threads_.size()),
          .running = running_,
          .blocked = blocked_,
          .queued = queue_.size()};
}

void WorkerPool::Enter() noexcept {
  {
    std::lock_guard lock(mu_);
    --running_;
    ++blocked_;
    WakeOneLocked();
  }
  FlushWakes();
}

void WorkerPool::Leave() noexcept {
  std::lock_guard lock(mu_);
  --blocked_;
  ++running_;
}

BlockingRegion::BlockingRegion(bool blocking) {
  if (!blocking || !t_pool) return;
  counted_ = true;
  if (t_blocking_depth++ > 0) return;
  pool_ = t_pool;
  pool_->Enter();
}

BlockingRegion::~BlockingRegion() {
  if (!counted_) return;
  --t_blocking_depth;
  if (pool_) pool_->Leave();
}

void WorkerPool::FailNewStacksForTesting(bool fail) { g_fail_new_stacks.store(fail); }

void Wakeup::Wait() {
  // On a fiber it suspends, inside a BlockingRegion too (it stays counted blocked): were
  // its thread to sleep, a suspended fiber of that thread could be what it waits for.
  if (t_slot && t_slot->current) {
    fiber_ = t_slot->current;
    uint32_t expected = kIdle;
    // Published before the fiber has left its thread: a Notify() meanwhile queues it on
    // that thread, which resumes it only after it has left.
    if (state_.compare_exchange_strong(expected, kParked, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
      Suspend();
    return;
  }
  uint32_t expected = kIdle;
  if (!state_.compare_exchange_strong(expected, kSleeping, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
    return;
  BlockingRegion blocking;
  while (state_.load(std::memory_order_acquire) == kSleeping) FutexWait(state_, kSleeping);
}

void Wakeup::Notify() {
  // Once the state reads kNotified the waiter may return and end this object: what is
  // needed after is read first or, for a parked fiber (which cannot return before it is
  // resumed), after.
  const uint32_t prev = state_.exchange(kNotified, std::memory_order_acq_rel);
  if (prev == kParked)
    fiber_->slot->pool->Ready(fiber_);
  else if (prev == kSleeping)
    FutexWake(state_);  // at worst a spurious wake-up of a reuser
}

}  // namespace crmd

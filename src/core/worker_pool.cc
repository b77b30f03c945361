#include "src/core/worker_pool.h"

#include <sched.h>

#include <algorithm>
#include <cassert>
#include <system_error>

#include "src/core/cpu_quota.h"

namespace crmd {
namespace {
thread_local WorkerPool* t_pool = nullptr;  // the pool this thread belongs to, if any
thread_local int t_blocking_depth = 0;
}  // namespace

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

WorkerPool::WorkerPool(int runners, int max_threads)
    : runners_(std::max(1, runners)), max_threads_(std::max(std::max(1, runners), max_threads)) {
  threads_.reserve(static_cast<size_t>(max_threads_));
}

WorkerPool::~WorkerPool() { Join(); }

bool WorkerPool::WakeOneLocked() {
  if (queue_.empty() || running_ >= runners_) return false;
  if (idle_ > 0) return true;  // a woken thread that finds nothing to do waits again
  // One thread starting at a time: it wakes or starts the next itself if work is left
  // (Loop), so a burst of posts does not start a thread per post.
  if (starting_ == 0 && static_cast<int>(threads_.size()) < max_threads_ && !stopping_) {
    try {
      threads_.emplace_back([this] { Loop(); });
      ++starting_;  // Loop() decrements it under mu_, which this thread holds
    } catch (const std::system_error&) {
      // No thread could be started (a process or container limit): the threads there are
      // carry on; the next wake-up tries again.
    }
  }
  return false;
}

void WorkerPool::Post(Task task) {
  bool notify;
  {
    std::lock_guard lock(mu_);
    if (stopping_ && threads_.empty()) {
      notify = false;
    } else {
      queue_.push_back(std::move(task));
      notify = WakeOneLocked();
      task = Task();
    }
  }
  if (task) {
    task();  // the pool has been joined: run it here
    return;
  }
  if (notify) cv_.notify_one();
}

void WorkerPool::Loop() {
  t_pool = this;
  std::unique_lock lock(mu_);
  --starting_;
  // Joining does not lift the runner limit: the queue drains at the usual pace.
  auto can_take = [&] { return (!queue_.empty() && running_ < runners_) || (stopping_ && queue_.empty()); };
  while (true) {
    ++idle_;
    cv_.wait(lock, can_take);
    --idle_;
    if (queue_.empty()) return;  // stopping, nothing left
    Task task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    // More queued than running: bring the next thread in (a burst starts threads one by
    // one until `runners_` run).
    bool notify = WakeOneLocked();
    lock.unlock();
    if (notify) cv_.notify_one();
    task();
    task = Task();  // destroyed outside the lock
    lock.lock();
    --running_;
    if (stopping_ && queue_.empty()) cv_.notify_all();  // the waiting threads may end
  }
}

void WorkerPool::Join() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
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
  return {.threads = static_cast<int>(threads_.size()), .running = running_, .blocked = blocked_,
          .queued = queue_.size()};
}

void WorkerPool::Enter() noexcept {
  bool notify;
  {
    std::lock_guard lock(mu_);
    --running_;
    ++blocked_;
    notify = WakeOneLocked();
  }
  if (notify) cv_.notify_one();
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

}  // namespace crmd

#include "src/core/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "src/core/log.h"

namespace crmd {
namespace {

using namespace std::chrono_literals;

// A gate the tasks wait on; Wait() gives up after `limit` so that a pool that fails to
// hand a waiting task's place to another thread fails the test instead of hanging it.
class Gate {
 public:
  void Open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  bool Wait(std::chrono::seconds limit = 20s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Waits until `pred` holds, or `limit` passes; answers whether it held.
template <typename P>
bool Eventually(P pred, std::chrono::seconds limit = 20s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Raises `most` to `n` if `n` is larger (the most seen at once, from many threads).
void RaiseTo(std::atomic<int>& most, int n) {
  int seen = most.load();
  while (n > seen && !most.compare_exchange_weak(seen, n)) {
  }
}

TEST(WorkerPool, RunsEveryPostedTask) {
  std::atomic<int> done{0};
  {
    WorkerPool pool(2, 8);
    for (int i = 0; i < 1000; ++i) pool.Post([&] { done.fetch_add(1); });
    pool.Join();
  }
  EXPECT_EQ(done.load(), 1000);
}

TEST(WorkerPool, NoMoreThanRunnersRunAtOnceWhenNoTaskBlocks) {
  std::atomic<int> now{0};
  std::atomic<int> most{0};
  WorkerPool pool(2, 16);
  for (int i = 0; i < 200; ++i) {
    pool.Post([&] {
      int n = now.fetch_add(1) + 1;
      RaiseTo(most, n);
      std::this_thread::sleep_for(200us);  // not in a BlockingRegion: still "running"
      now.fetch_sub(1);
    });
  }
  pool.Join();
  EXPECT_LE(most.load(), 2);
}

TEST(WorkerPool, StartsOnlyAsManyThreadsAsCanRun) {
  WorkerPool pool(2, 16);
  Gate gate;
  std::atomic<int> started{0};
  for (int i = 0; i < 10; ++i) {
    pool.Post([&] {
      started.fetch_add(1);
      gate.Wait();
    });
  }
  ASSERT_TRUE(Eventually([&] { return started.load() == 2; }));
  std::this_thread::sleep_for(50ms);
  auto s = pool.stats();
  EXPECT_EQ(started.load(), 2);
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.running, 2);
  EXPECT_EQ(s.queued, 8u);
  gate.Open();
  pool.Join();
  EXPECT_EQ(started.load(), 10);
}

TEST(WorkerPool, ABlockedTaskGivesItsPlaceToAnother) {
  // One runner and eight tasks that each wait, in a BlockingRegion, until all eight are
  // waiting: only a pool that runs another task while one blocks lets them all in.
  WorkerPool pool(1, 8);
  std::atomic<int> inside{0};
  Gate all_in;
  std::atomic<int> finished{0};
  for (int i = 0; i < 8; ++i) {
    pool.Post([&] {
      BlockingRegion blocking;
      if (inside.fetch_add(1) + 1 == 8) all_in.Open();
      EXPECT_TRUE(all_in.Wait());
      finished.fetch_add(1);
    });
  }
  EXPECT_TRUE(all_in.Wait());
  pool.Join();
  EXPECT_EQ(inside.load(), 8);
  EXPECT_EQ(finished.load(), 8);
}

TEST(WorkerPool, BlockedTasksNeverExceedMaxThreads) {
  WorkerPool pool(1, 3);
  Gate gate;
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  for (int i = 0; i < 9; ++i) {
    pool.Post([&] {
      BlockingRegion blocking;
      int n = inside.fetch_add(1) + 1;
      RaiseTo(most, n);
      gate.Wait();
      inside.fetch_sub(1);
    });
  }
  ASSERT_TRUE(Eventually([&] { return inside.load() == 3; }));
  std::this_thread::sleep_for(50ms);
  auto s = pool.stats();
  EXPECT_EQ(s.threads, 3);
  EXPECT_EQ(s.blocked, 3);
  EXPECT_EQ(s.running, 0);
  EXPECT_EQ(s.queued, 6u);
  gate.Open();
  pool.Join();
  EXPECT_EQ(most.load(), 3);
  EXPECT_EQ(inside.load(), 0);
}

TEST(WorkerPool, AThreadBackFromBlockingFinishesItsTaskThenTheRunnerLimitHoldsAgain) {
  WorkerPool pool(1, 4);
  Gate release;
  std::atomic<int> blocked_done{0};
  std::atomic<int> now{0};
  std::atomic<int> most_after{0};
  std::atomic<int> ran_after{0};
  pool.Post([&] {
    {
      BlockingRegion blocking;
      release.Wait();
    }
    blocked_done.fetch_add(1);
  });
  ASSERT_TRUE(Eventually([&] { return pool.stats().blocked == 1; }));
  for (int i = 0; i < 50; ++i) {
    pool.Post([&] {
      int n = now.fetch_add(1) + 1;
      if (blocked_done.load() == 1) {
        ran_after.fetch_add(1);
        RaiseTo(most_after, n);
      }
      std::this_thread::sleep_for(1ms);
      now.fetch_sub(1);
    });
  }
  // Let some of the 50 run while the first is blocked, then release it.
  ASSERT_TRUE(Eventually([&] { return pool.stats().queued < 50; }));
  release.Open();
  pool.Join();
  EXPECT_EQ(blocked_done.load(), 1);
  // Once the blocked task is back and done, one runner again: never two at once.
  EXPECT_GT(ran_after.load(), 0);
  EXPECT_LE(most_after.load(), 1);
}

TEST(WorkerPool, RegionsOffThePoolAndNestedRegionsAreHarmless) {
  { BlockingRegion outside; }  // not a pool thread: nothing happens
  WorkerPool pool(1, 2);
  std::atomic<int> states{0};
  pool.Post([&] {
    {
      BlockingRegion outer;
      {
        BlockingRegion inner;
        BlockingRegion not_blocking(false);
      }
      auto s = pool.stats();
      if (s.blocked == 1 && s.running == 0) states.fetch_add(1);
    }
    auto s = pool.stats();
    if (s.blocked == 0 && s.running == 1) states.fetch_add(1);
  });
  pool.Join();
  EXPECT_EQ(states.load(), 2);
}

TEST(WorkerPool, APostAfterJoinRunsOnTheCaller) {
  WorkerPool pool(1, 1);
  pool.Join();
  auto caller = std::this_thread::get_id();
  std::thread::id ran_on;
  pool.Post([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, caller);
}

// With fibers, a task waiting on a Wakeup leaves its thread to the next task: fifty tasks
// wait at once on one thread. (A build with a sanitizer runs no fibers: each waits as a
// blocked handler, on a thread of its own.)
TEST(WorkerPool, TasksWaitingOnAWakeupLeaveTheirThreadToTheNext) {
  const bool fibers = WorkerPool::FibersSupported();
  constexpr int kTasks = 50;
  WorkerPool pool(1, fibers ? 1 : kTasks + 1);
  EXPECT_EQ(pool.fibers(), fibers);
  std::vector<Wakeup> wakeups(kTasks);
  std::atomic<int> waiting{0};
  std::atomic<int> done{0};
  for (int i = 0; i < kTasks; ++i)
    pool.Post([&, i] {
      waiting.fetch_add(1);
      wakeups[static_cast<size_t>(i)].Wait();
      done.fetch_add(1);
    });
  ASSERT_TRUE(Eventually([&] { return waiting.load() == kTasks; }));
  EXPECT_EQ(done.load(), 0);
  if (fibers) {
    EXPECT_EQ(pool.stats().threads, 1);
  }
  // Notified from another thread, in the reverse order: each finishes its task.
  for (int i = kTasks - 1; i >= 0; --i) wakeups[static_cast<size_t>(i)].Notify();
  ASSERT_TRUE(Eventually([&] { return done.load() == kTasks; }));
  pool.Join();
  EXPECT_EQ(done.load(), kTasks);
}

// A task's log context is its own across a wait, whatever ran on its thread meanwhile, and
// a task started meanwhile begins with none.
TEST(WorkerPool, AWaitingTaskKeepsItsLogContextAndTheNextStartsWithNone) {
  WorkerPool pool(1, WorkerPool::FibersSupported() ? 1 : 4);
  Wakeup a, b;
  std::atomic<int> waiting{0};
  std::atomic<int> kept{0};
  auto task = [&](const std::string& id, Wakeup& w) {
    LogScope scope(LogContext{.request_id = id, .trace = {}});
    waiting.fetch_add(1);
    w.Wait();
    const LogContext* now = CurrentLogContext();
    if (now && now->request_id == id) kept.fetch_add(1);
  };
  pool.Post([&] { task("a", a); });
  pool.Post([&] { task("b", b); });
  ASSERT_TRUE(Eventually([&] { return waiting.load() == 2; }));
  std::atomic<int> fresh{0};
  pool.Post([&] { fresh = CurrentLogContext() == nullptr ? 1 : 2; });
  ASSERT_TRUE(Eventually([&] { return fresh.load() != 0; }));
  a.Notify();
  b.Notify();
  pool.Join();
  EXPECT_EQ(fresh.load(), 1);
  EXPECT_EQ(kept.load(), 2);
}

TEST(WorkerPool, JoinWaitsForTasksWaitingOnAWakeup) {
  Wakeup w;
  std::atomic<bool> waiting{false};
  std::atomic<bool> done{false};
  WorkerPool pool(1, 2);
  pool.Post([&] {
    waiting = true;
    w.Wait();
    done = true;
  });
  ASSERT_TRUE(Eventually([&] { return waiting.load(); }));
  std::thread notifier([&] {
    std::this_thread::sleep_for(50ms);
    w.Notify();
  });
  pool.Join();
  EXPECT_TRUE(done.load());
  notifier.join();
}

// A task refused a stack (mmap failed) while a fiber of its thread waits must not run on
// that thread's own stack: blocked there, it would keep the thread from resuming the fiber
// it waits for (a writer told to lead a group commit, say). Here B wakes A and then waits
// for A; run on A's thread, neither would ever go on.
TEST(WorkerPool, ATaskRefusedAStackDoesNotBlockTheThreadOfAWaitingFiber) {
  WorkerPool pool(1, 2);
  Wakeup a_woken, b_woken;
  std::atomic<bool> a_waiting{false};
  std::atomic<bool> a_done{false};
  pool.Post([&] {
    a_waiting = true;
    a_woken.Wait();
    b_woken.Notify();
    a_done = true;
  });
  ASSERT_TRUE(Eventually([&] { return a_waiting.load(); }));
  ASSERT_EQ(pool.stats().threads, 1);
  WorkerPool::FailNewStacksForTesting(true);
  std::promise<void> b_done;
  auto b_future = b_done.get_future();
  pool.Post([&] {
    a_woken.Notify();
    b_woken.Wait();
    b_done.set_value();
  });
  const bool finished = b_future.wait_for(20s) == std::future_status::ready;
  WorkerPool::FailNewStacksForTesting(false);
  if (!finished) b_woken.Notify();  // lets the pool end, so the test fails instead of hanging
  EXPECT_TRUE(finished) << "B ran on the thread of the fiber it waited for";
  pool.Join();
  EXPECT_TRUE(a_done.load());
  EXPECT_EQ(pool.stats().running, 0);
  EXPECT_EQ(pool.stats().queued, 0u);
}

// A Wakeup waited on inside a BlockingRegion suspends a fiber too (its thread resumes the
// fiber that notifies it), and the fiber stays counted blocked, not running, meanwhile. (Without
// fibers, Y's thread sleeps and X runs on the second.)
TEST(WorkerPool, AFiberWaitingInsideABlockingRegionLeavesItsThreadAndStaysCountedBlocked) {
  WorkerPool pool(1, 2);
  Wakeup x_woken, y_woken;
  std::atomic<bool> x_waiting{false};
  std::atomic<int> seen_running{-1}, seen_blocked{-1};
  pool.Post([&] {
    x_waiting = true;
    x_woken.Wait();
    const WorkerPool::Stats st = pool.stats();
    seen_running = st.running;
    seen_blocked = st.blocked;
    y_woken.Notify();
  });
  ASSERT_TRUE(Eventually([&] { return x_waiting.load(); }));
  std::promise<void> y_done;
  auto y_future = y_done.get_future();
  pool.Post([&] {
    x_woken.Notify();
    {
      BlockingRegion blocking;
      y_woken.Wait();
    }
    y_done.set_value();
  });
  const bool finished = y_future.wait_for(20s) == std::future_status::ready;
  if (!finished) y_woken.Notify();
  EXPECT_TRUE(finished) << "the thread slept with the fiber it waited for suspended on it";
  pool.Join();
  EXPECT_EQ(seen_running.load(), 1);  // X alone runs
  EXPECT_EQ(seen_blocked.load(), 1);  // Y waits in its region
  const WorkerPool::Stats st = pool.stats();
  EXPECT_EQ(st.running, 0);
  EXPECT_EQ(st.blocked, 0);
}

// A task posted while a thread is on its way to resume a fiber starts beside that fiber
// when a runner is free, not after it (the fiber may lead group commits for long). (The
// order of the post and the wake-up is a race the test wins nearly always; lost, it
// passes without having shown anything.)
TEST(WorkerPool, ATaskPostedWhileAThreadWakesForAFiberDoesNotWaitForThatFiber) {
  WorkerPool pool(2, 3);
  // Thread 1: blocked outside the process, so it takes nothing.
  Gate release_blocker;
  std::atomic<bool> blocker_in{false};
  pool.Post([&] {
    BlockingRegion blocking;
    blocker_in = true;
    release_blocker.Wait(60s);
  });
  ASSERT_TRUE(Eventually([&] { return blocker_in.load() && pool.stats().blocked == 1; }));
  // Thread 2: F waits on a Wakeup, and its thread goes idle.
  Wakeup f_woken;
  std::atomic<bool> f_waiting{false};
  std::promise<void> t_ran;
  auto t_future = t_ran.get_future().share();
  std::atomic<bool> f_saw_t{false};
  pool.Post([&] {
    f_waiting = true;
    f_woken.Wait();
    // Resumed: runs until T has run (for long, as a leader may).
    f_saw_t = t_future.wait_for(60s) == std::future_status::ready;
  });
  ASSERT_TRUE(Eventually([&] { return f_waiting.load() && pool.stats().running == 0; }));
  // T is posted (its post wakes thread 2) and F is woken right after: the thread finds F
  // ready first, and nothing else was woken for T.
  pool.Post([&] { t_ran.set_value(); });
  f_woken.Notify();
  const bool ran = t_future.wait_for(20s) == std::future_status::ready;
  release_blocker.Open();  // lets T run (on thread 1) if it has not
  pool.Join();
  EXPECT_TRUE(ran) << "T waited behind the fiber its thread was woken for";
  EXPECT_TRUE(f_saw_t.load());
}

#if defined(__SANITIZE_ADDRESS__)
// A fiber's stack comes back from the thread's cache with no poison on it: redzones that
// an earlier fiber's frames left behind (frames left by a jump, not a return) must not
// make a later fiber's own writes look like overflows (a CI run once stopped on one).
TEST(WorkerPool, AReusedFiberStackCarriesNoPoisonFromTheFiberBefore) {
  ASSERT_TRUE(WorkerPool::FibersSupported());
  WorkerPool pool(1, 1);
  char* first_local = nullptr;
  char* poisoned = nullptr;
  constexpr size_t kSpan = 4096;
  std::promise<void> first_done;
  pool.Post([&] {
    char local = 0;
    first_local = &local;
    // 64 KiB below this frame: where a deeper frame would have stood.
    poisoned = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(&local - (64 << 10)) &
                                       ~uintptr_t{4095});
    __asan_poison_memory_region(poisoned, kSpan);
    first_done.set_value();
  });
  first_done.get_future().wait();
  ASSERT_NE(__asan_region_is_poisoned(poisoned, kSpan), nullptr);  // left as it was
  char* second_local = nullptr;
  const void* still_poisoned = nullptr;
  std::promise<void> second_done;
  pool.Post([&] {
    char local = 0;
    second_local = &local;
    still_poisoned = __asan_region_is_poisoned(poisoned, kSpan);
    second_done.set_value();
  });
  second_done.get_future().wait();
  pool.Join();
  // The same stack (the cache hands the last one back): within a fiber's 1 MiB of the first.
  ASSERT_LT(std::abs(second_local - first_local), 1 << 20);
  EXPECT_EQ(still_poisoned, nullptr);
}
#endif

TEST(Wakeup, OffThePoolAThreadWaitsUntilNotifiedAndAnEarlyNotifyIsKept) {
  Wakeup early;
  early.Notify();
  early.Wait();  // returns at once
  Wakeup w;
  std::atomic<bool> back{false};
  std::thread t([&] {
    w.Wait();
    back = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(back.load());
  w.Notify();
  t.join();
  EXPECT_TRUE(back.load());
}

}  // namespace
}  // namespace crmd

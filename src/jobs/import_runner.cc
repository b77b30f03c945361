#include "src/jobs/import_runner.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <random>

namespace crmd::jobs {
namespace {

std::string ImportOwnerId() {
  std::random_device rd;
  return "crmd:" + std::to_string(getpid()) + ":" + std::to_string(rd());
}

}  // namespace

ImportRunner::ImportRunner(crm::ImportService& imports, ImportRunnerOptions options)
    : imports_(imports), options_(options), owner_(ImportOwnerId()) {}

bool ImportRunner::Stopping() {
  std::lock_guard lock(mu_);
  return stop_;
}

bool ImportRunner::RunOnce() {
  auto id = imports_.Lease(owner_, options_.lease_s);
  if (!id) {
    spdlog::warn(R"("event":"import_lease_failed","code":"{}")", ErrcCode(id.error().code));
    return false;
  }
  if (!*id) return false;
  spdlog::info(R"("event":"import_started","import_id":{})", **id);
  while (!Stopping()) {
    auto more = imports_.RunBatch(**id, owner_, options_.lease_s);
    if (!more) {
      spdlog::warn(R"("event":"import_batch_failed","import_id":{},"code":"{}")", **id,
                   ErrcCode(more.error().code));
      // The batch rolled back whole. A database that is away comes back: the lease runs
      // out and the import is taken again. Anything else would fail the same way again.
      if (more.error().code != Errc::kUnavailable)
        (void)imports_.MarkFailed(**id, owner_, more.error().message);
      return true;
    }
    if (!*more) break;
  }
  spdlog::info(R"("event":"import_stopped","import_id":{})", **id);
  return true;
}

void ImportRunner::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stop_) {
      lock.unlock();
      bool worked = RunOnce();
      lock.lock();
      if (worked) continue;
      cv_.wait_for(lock, std::chrono::milliseconds(options_.poll_interval_ms),
                   [this] { return stop_; });
    }
  });
}

void ImportRunner::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace crmd::jobs

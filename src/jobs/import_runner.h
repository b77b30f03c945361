#pragma once
// The import loop: one thread per node, started in App::Start and stopped in App::Stop.
// Each round it leases the oldest queued import (or one whose lease ran out: its node
// died) and runs it batch by batch (crm::ImportService::RunBatch), each batch renewing the
// lease; a stop lets the batch in flight commit and leaves the rest to the next start or
// another node. Thread-safe: Start/Stop may be called from any thread.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "src/crm/imports.h"

namespace crmd::jobs {

struct ImportRunnerOptions {
  int poll_interval_ms = 1000;
  int64_t lease_s = 60;  // a batch of 500 rows takes well under this
};

class ImportRunner {
 public:
  ImportRunner(crm::ImportService& imports, ImportRunnerOptions options);
  ~ImportRunner() { Stop(); }
  ImportRunner(const ImportRunner&) = delete;
  ImportRunner& operator=(const ImportRunner&) = delete;

  void Start();
  void Stop();
  // Leases one import and runs it until it ends or Stop(); false when none was waiting.
  bool RunOnce();

 private:
  bool Stopping();

  crm::ImportService& imports_;
  const ImportRunnerOptions options_;
  const std::string owner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace crmd::jobs

#pragma once
// The bounce mailbox poll (docs/mail.md, "Bounce mailbox"): a background thread that every
// `poll_seconds` takes the job lease "bounce_mailbox" (table job_leases; one node at a time
// polls, another takes over once a lease has run out), reads every mail of the mailbox
// (src/mail/mailbox_client.h), has marketing::BounceMailbox apply it, deletes the mails
// that were applied (or had been: a report's Message-ID is applied once, so a mail whose
// deletion was lost is only deleted the next time) and leaves the rest.
//
// Metrics: crmd_bounce_mailbox_mails_total{outcome} (applied, duplicate, unattributed,
// error) and crmd_bounce_mailbox_polls_total{outcome} (ok, unavailable); the composition
// root's collector reads crmd_bounce_mailbox_unattributed (mails left, as recorded).
// Thread-safe: Start/Stop/RunOnce from any thread.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "src/core/clock.h"
#include "src/core/metrics.h"
#include "src/core/result.h"
#include "src/marketing/bounce_mailbox.h"
#include "src/store/db.h"

namespace crmd::jobs {

struct BouncePollerOptions {
  std::string mailbox_url;  // bounce_mailbox_url; never logged (only its redaction)
  int64_t poll_seconds = 60;
  metrics::Registry* metrics = nullptr;  // null: not counted
};

struct PollCounts {
  int64_t applied = 0, duplicate = 0, unattributed = 0, errors = 0;
};

class BouncePoller {
 public:
  BouncePoller(store::Database& db, marketing::BounceMailbox& mailbox, const Clock& clock,
               BouncePollerOptions options);
  ~BouncePoller() { Stop(); }
  BouncePoller(const BouncePoller&) = delete;
  BouncePoller& operator=(const BouncePoller&) = delete;

  void Start();
  void Stop();
  // One poll when this node holds (or takes) the lease; nullopt-like zero counts when
  // another node does. kUnavailable when the mailbox cannot be read.
  Result<PollCounts> RunOnce();

 private:
  Result<bool> TakeLease();
  void Count(const char* name, const char* outcome);

  store::Database& db_;
  marketing::BounceMailbox& mailbox_;
  const Clock& clock_;
  const BouncePollerOptions options_;
  const std::string node_id_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace crmd::jobs

#pragma once
// The durable job queues as the operator sees them (/readyz and /metrics): webhook
// deliveries, campaign sends and automation steps, read in one snapshot.
#include <cstdint>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::jobs {

struct JobQueues {
  store::QueueStats webhook_deliveries, campaign_sends, automation_steps;
};

Result<JobQueues> ReadJobQueues(store::Database& db, int64_t now);

}  // namespace crmd::jobs

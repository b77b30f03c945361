#include "src/jobs/queues.h"

#include "src/marketing/automation_runs_repo.h"
#include "src/marketing/campaign_sends_repo.h"
#include "src/webhooks/deliveries_repo.h"

namespace crmd::jobs {

Result<JobQueues> ReadJobQueues(store::Database& db, int64_t now) {
  return db.Read([&](store::Conn& c) -> Result<JobQueues> {
    auto w = webhooks::deliveries_repo::QueueStats(c, now);
    if (!w) return Fail(w.error());
    auto k = marketing::campaign_sends_repo::QueueStats(c, now);
    if (!k) return Fail(k.error());
    auto a = marketing::automation_runs_repo::QueueStats(c, now);
    if (!a) return Fail(a.error());
    return JobQueues{*w, *k, *a};
  });
}

}  // namespace crmd::jobs

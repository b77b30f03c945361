#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "src/app/wiring.h"
#include "src/core/log.h"
#include "src/http/forwarding.h"
#include "src/jobs/queues.h"
#include "src/store/sqlite.h"
#include "src/webhooks/endpoints_repo.h"

namespace crmd::app {

namespace {

using jobs::JobQueues;
using jobs::ReadJobQueues;

nlohmann::json QueueJson(const store::QueueStats& q, int64_t now) {
  return {{"pending", q.pending}, {"due", q.due}, {"lag_seconds", q.LagSeconds(now)}};
}

}  // namespace

// /healthz: the process answers. /readyz: this node can serve (database reachable and
// writable, schema at this binary's level), with the job queues' lag for the operator
// (lag alone does not make a node unready: more nodes would not be refused work they could
// take).
void AddHealthRoutes(App::Services& s, Router& router) {
  router.Exact("/healthz", [](const http::Request& req) {
    if (auto r = RequireMethod(req, "GET, HEAD")) return *r;
    return http::Response::Json(200, {{"status", "ok"}});
  });
  router.Exact("/readyz", [&s](const http::Request& req) {
    if (auto r = RequireMethod(req, "GET, HEAD")) return *r;
    const int64_t now = s.clock->NowUnix();
    auto level = store::CheckMigrations(*s.db);
    if (!level) {
      spdlog::warn(
          R"("event":"readyz_database_unavailable","detail":"{}")",
          JsonEscape(level.error().detail.empty() ? level.error().message : level.error().detail));
      return http::Response::Json(503, {{"status", "unavailable"}, {"database", {{"ok", false}}}});
    }
    nlohmann::json body = {
        {"database", {{"ok", true}, {"dialect", store::DialectName(s.db->dialect())}}},
        {"migrations",
         {{"expected", level->expected},
          {"applied", level->applied},
          {"pending", level->pending}}}};
    if (auto q = ReadJobQueues(*s.db, now)) {
      body["jobs"] = {{"webhook_deliveries", QueueJson(q->webhook_deliveries, now)},
                      {"campaign_sends", QueueJson(q->campaign_sends, now)},
                      {"automation_steps", QueueJson(q->automation_steps, now)}};
    } else {
      body["database"]["ok"] = false;
    }
    // Reads may work while writes cannot be made durable (a failed sync: src/store/sqlite.cc).
    const Status writable = s.db->Writable();
    body["database"]["writable"] = writable.has_value();
    if (!writable) body["database"]["ok"] = false;  // logged once, by the engine
    bool ready = body["database"]["ok"].get<bool>() && level->pending == 0;
    body["status"] = ready ? "ready" : "unavailable";
    return http::Response::Json(ready ? 200 : 503, body);
  });
}

// GET /metrics (Prometheus text format 0.0.4) to clients in metrics_allow only.
void AddMetricsRoute(App::Services& s, Router& router,
                     std::shared_ptr<const http::ProxyTrust> allow) {
  router.Exact("/metrics", [&s, allow](const http::Request& req) {
    if (auto r = RequireMethod(req, "GET, HEAD")) return *r;
    auto ip = http::ParseIp(req.remote_ip);
    if (!ip || !allow->Trusts(*ip))
      return http::Response::Json(
          403, {{"error", "forbidden"},
                {"error_description", "this address may not read metrics (metrics_allow)"}});
    return http::Response::Text(200, s.metrics->Render(),
                                "text/plain; version=0.0.4; charset=utf-8");
  });
}

// Values read when scraped: process memory, the database pool, the schema level, job
// queues and webhook endpoints (cheap indexed counts).
void AddCollectors(App::Services& s) {
  metrics::Registry& m = *s.metrics;
  m.AddCollector([&s, &m] {
    m.Gauge("crmd_process_resident_memory_bytes", "Resident set size of the crmd process.")
        .Set(metrics::ProcessRssBytes());
    m.Gauge("crmd_db_pool_size", "Database connections this node may open for transactions.")
        .Set(DbPoolSize(s.config));
    if (const auto stats = store::SqliteStatsOf(*s.db)) {
      // The SQLite engine's own counts (src/store/sqlite.cc), read from memory. Counters
      // only go up, and only this collector moves these (collectors run one at a time).
      const store::SqliteWriteStats& w = *stats;
      auto up_to = [](metrics::Counter& c, uint64_t v) {
        if (v > c.Value()) c.Inc(v - c.Value());
      };
      up_to(m.Counter("crmd_sqlite_checkpoints_total",
                      "SQLite checkpoints: by the checkpoint thread (background: asked for each "
                      "1,000 pages of WAL growth, or after a quiet second) or by a group "
                      "commit's leader inside its turn once the WAL reached 4,000 pages (leader).",
                      {{"by", "background"}}),
            w.background_checkpoints);
      up_to(m.Counter("crmd_sqlite_checkpoints_total", "", {{"by", "leader"}}),
            w.leader_checkpoints);
      up_to(m.Counter("crmd_sqlite_wal_syncs_total",
                      "fdatasyncs of the SQLite WAL by the group commit's sync thread; each "
                      "covers every batch committed since the one before."),
            w.syncs);
    }
    const int64_t now = s.clock->NowUnix();
    auto level = store::CheckMigrations(*s.db);
    auto queues = level ? ReadJobQueues(*s.db, now) : Result<JobQueues>(Fail(level.error()));
    auto endpoints = queues ? s.webhook_endpoints->CountByState()
                            : Result<webhooks::endpoints_repo::StateCounts>(Fail(queues.error()));
    m.Gauge("crmd_db_up", "1 when the database answered this scrape's queries.")
        .Set(endpoints ? 1 : 0);
    if (s.bounce_mailbox && endpoints)
      if (auto n = s.bounce_mailbox->UnattributedCount())
        m.Gauge("crmd_bounce_mailbox_unattributed",
                "Mails of the bounce mailbox crmd could not attribute (left there; docs/mail.md).")
            .Set(*n);
    if (level) {
      m.Gauge("crmd_schema_migrations",
              "Schema migration level: this binary's (expected), the database's (applied), and how "
              "many of this binary's are missing (pending).",
              {{"level", "expected"}})
          .Set(level->expected);
      m.Gauge("crmd_schema_migrations", "", {{"level", "applied"}}).Set(level->applied);
      m.Gauge("crmd_schema_migrations", "", {{"level", "pending"}}).Set(level->pending);
    }
    if (queues) {
      for (auto [name, q] : {std::pair<std::string_view, const store::QueueStats*>{
                                 "webhook_deliveries", &queues->webhook_deliveries},
                             {"campaign_sends", &queues->campaign_sends},
                             {"automation_steps", &queues->automation_steps}}) {
        m.Gauge("crmd_job_queue_pending", "Rows waiting in a job queue (leased ones included).",
                {{"queue", name}})
            .Set(q->pending);
        m.Gauge("crmd_job_queue_due", "Rows of a job queue that are due now and not leased.",
                {{"queue", name}})
            .Set(q->due);
        m.Gauge("crmd_job_queue_lag_seconds",
                "How long the oldest due row of a job queue has waited.", {{"queue", name}})
            .Set(q->LagSeconds(now));
      }
    }
    if (endpoints) {
      m.Gauge("crmd_webhook_endpoints", "Outgoing webhook endpoints by state.",
              {{"state", "enabled"}})
          .Set(endpoints->enabled);
      m.Gauge("crmd_webhook_endpoints", "", {{"state", "disabled"}}).Set(endpoints->disabled);
      m.Gauge("crmd_webhook_endpoints", "", {{"state", "disabled_after_failures"}})
          .Set(endpoints->failing_disabled);
    }
  });
}

}  // namespace crmd::app

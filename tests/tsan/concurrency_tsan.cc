// The concurrent parts under ThreadSanitizer (scripts/tsan.sh): the MCP session store,
// the per-principal rate limiter, the verified-token cache, the requestState codec, the
// SQLite database's writer and reader pool, and the handler pool (src/core/worker_pool.h)
// running reads and group-committed writes, and the revoked-token snapshot refreshed while
// it is read and marked stale, each driven by many threads at once.
// TSan reports any data race (and the run fails); each scenario also checks what it
// promises, so a lost update fails too. Prints one line per scenario.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "auth/token_revocations.h"
#include "auth/verified_tokens.h"
#include "src/core/random.h"
#include "src/core/worker_pool.h"
#include "src/mcp/rate_limiter.h"
#include "src/mcp/request_state.h"
#include "src/mcp/session.h"
#include "src/store/db.h"
#include "tests/support/fake_clock.h"

namespace {

using nlohmann::json;
constexpr int kThreads = 8;

void Expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL: %s\n", what);
    std::abort();
  }
}

template <typename F>
void Parallel(F&& body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&body, t] { body(t); });
  for (auto& th : threads) th.join();
}

void Sessions() {
  crmd::SystemClock clock;
  crmd::SecureRandom random;
  crmd::mcp::SessionStore store(
      {.idle_ttl_s = 3600, .max_sessions = 500, .max_sessions_per_owner = 20}, clock, random);
  std::atomic<int> created{0}, found{0};
  Parallel([&](int t) {
    std::string owner = "owner-" + std::to_string(t % 3);
    std::vector<std::string> mine;
    for (int i = 0; i < 1500; ++i) {
      if (i % 3 == 0 || mine.empty()) {
        auto id = store.Create(owner, "2025-11-25");
        if (id) {
          mine.push_back(*id);
          ++created;
        }
      } else {
        const std::string& id = mine[static_cast<size_t>(i) % mine.size()];
        crmd::mcp::SessionInfo info;
        auto r = store.Find(id, owner, &info);
        Expect(r == crmd::mcp::Sessions::Lookup::kOk || r == crmd::mcp::Sessions::Lookup::kNotFound,
               "a session is found or was evicted by the per-owner cap");
        if (r == crmd::mcp::Sessions::Lookup::kOk) {
          ++found;
          Expect(info.protocol_version == "2025-11-25", "the session keeps its version");
          store.MarkInitialized(id);
        }
        Expect(store.Find(id, "someone-else") != crmd::mcp::Sessions::Lookup::kOk,
               "another owner never finds it");
        if (i % 7 == 0) (void)store.End(id, owner);
      }
    }
  });
  Expect(store.size() <= 3 * 20, "the per-owner cap holds");
  std::printf("sessions: %d created, %d found, %zu live\n", created.load(), found.load(),
              store.size());
}

void RateLimits() {
  crmd::SystemClock clock;
  crmd::mcp::RateLimiter limiter({.per_second = 1, .burst = 500}, clock);
  std::atomic<int> allowed{0};
  Parallel([&](int t) {
    for (int i = 0; i < 2000; ++i) {
      if (limiter.Allow("shared")) ++allowed;
      (void)limiter.Allow("own-" + std::to_string(t));
    }
  });
  // 500 at once, plus at most a few refilled in the seconds the run takes.
  Expect(allowed >= 500 && allowed <= 520, "the shared bucket gives its burst once");
  std::printf("rate limiter: %d of %d calls allowed on the shared key\n", allowed.load(),
              kThreads * 2000);
}

void VerifiedTokenCache() {
  crmd::auth::VerifiedTokens cache(256);
  std::atomic<int> hits{0};
  const int64_t now = 1'800'000'000;
  Parallel([&](int t) {
    for (int i = 0; i < 3000; ++i) {
      std::string jwt = "token-" + std::to_string(i % 400);
      if (auto e = cache.Find(jwt, now, 10)) {
        Expect(e->claims.subject == "sub-" + std::to_string(i % 400),
               "a hit is the token's own entry");
        ++hits;
      } else {
        crmd::auth::VerifiedTokens::Entry entry;
        entry.claims.subject = "sub-" + std::to_string(i % 400);
        entry.claims.expires_at = now + 3600;
        entry.kid = "k" + std::to_string(t);
        cache.Insert(jwt, std::move(entry), now);
      }
    }
  });
  Expect(hits > 0, "the cache hits");
  std::printf("verified tokens: %d hits\n", hits.load());
}

void RequestStates() {
  crmd::SystemClock clock;
  crmd::SecureRandom random;
  crmd::mcp::RequestStateCodec codec({{.id = "k1", .secret = random.Bytes(32)}}, {}, clock);
  std::vector<std::string> sealed(kThreads * 200);
  auto binding = [](int n) {
    return crmd::mcp::RequestStateBinding{.client_id = "c",
                                          .subject = std::to_string(n % 5),
                                          .method = "tools/call",
                                          .name = "confirm_action",
                                          .arguments_digest = "d" + std::to_string(n)};
  };
  Parallel([&](int t) {
    for (int i = 0; i < 200; ++i) {
      int n = t * 200 + i;
      auto s = codec.Seal(binding(n), json{{"round", n}});
      Expect(s.has_value(), "sealing works");
      sealed[static_cast<size_t>(n)] = *s;
    }
  });
  std::atomic<int> opened{0};
  Parallel([&](int t) {
    for (int i = 0; i < 200; ++i) {
      int n = ((t + 1) % kThreads) * 200 + i;  // another thread's states
      auto o = codec.Open(sealed[static_cast<size_t>(n)], binding(n));
      Expect(o.has_value() && (*o)["round"] == n, "a state opens with its own binding");
      Expect(!codec.Open(sealed[static_cast<size_t>(n)], binding(n + 1)), "and with no other");
      ++opened;
    }
  });
  std::printf("request states: %d sealed and opened across threads\n", opened.load());
}

// A database at `path` with table t, and its row count.
std::unique_ptr<crmd::store::Database> OpenWithTable(const std::string& path, int pool_size) {
  auto db = crmd::store::Open("sqlite:" + path, pool_size);
  Expect(db.has_value(), "the database opens");
  Expect((*db)
             ->Write([](crmd::store::Conn& c) {
               return c.ExecScript("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
             })
             .has_value(),
         "the table is made");
  return std::move(*db);
}

crmd::Result<int64_t> CountRows(crmd::store::Database& db) {
  return db.Read([](crmd::store::Conn& c) -> crmd::Result<int64_t> {
    auto row = c.QueryOne("SELECT COUNT(*) FROM t");
    if (!row) return crmd::Fail(row.error());
    return (*row)->Int(0);
  });
}

void SqlitePool(const std::string& dir) {
  auto db = OpenWithTable(dir + "/tsan.db", 4);
  std::atomic<int> written{0}, reads{0};
  Parallel([&](int t) {
    for (int i = 0; i < 150; ++i) {
      if (t % 2 == 0) {
        auto w = db->Write([&](crmd::store::Conn& c) {
          return c.Exec("INSERT INTO t (v) VALUES (?)",
                        {std::to_string(t) + "-" + std::to_string(i)});
        });
        Expect(w.has_value(), "a write commits");
        ++written;
      } else {
        auto n = CountRows(*db);
        Expect(n.has_value() && *n >= 0, "a read answers");
        ++reads;
      }
    }
  });
  auto n = CountRows(*db);
  Expect(n.has_value() && *n == written.load(), "every acknowledged write is there");
  std::printf("sqlite pool: %d writes, %d reads, %lld rows\n", written.load(), reads.load(),
              static_cast<long long>(*n));
}

// The handler pool as the server uses it: 2 runners, 64 threads, 18 readers; half the tasks write
// (each waits for its group commit in a BlockingRegion, so others run meanwhile), half
// read. Every task runs once, and every acknowledged write is there.
void HandlerPool(const std::string& dir) {
  auto db = OpenWithTable(dir + "/tsan-pool.db", 18);
  std::atomic<int> most_blocked{0};
  std::atomic<int> written{0}, reads{0}, ran{0};
  constexpr int kTasks = 1200;
  {
    crmd::WorkerPool pool(2, 64);
    Parallel([&](int t) {
      for (int i = 0; i < kTasks / kThreads; ++i) {
        pool.Post([&, t, i] {
          ++ran;
          if ((t + i) % 2 == 0) {
            auto w = db->Write([&](crmd::store::Conn& c) {
              int b = pool.stats().blocked;  // this writer is in its BlockingRegion here
              int seen = most_blocked.load();
              while (b > seen && !most_blocked.compare_exchange_weak(seen, b)) {
              }
              return c.Exec("INSERT INTO t (v) VALUES (?)",
                            {std::to_string(t) + "-" + std::to_string(i)});
            });
            Expect(w.has_value(), "a write from the pool commits");
            ++written;
          } else {
            auto n = CountRows(*db);
            Expect(n.has_value(), "a read from the pool answers");
            ++reads;
          }
        });
      }
    });
    pool.Join();
    auto s = pool.stats();
    Expect(s.queued == 0 && s.running == 0 && s.blocked == 0, "the joined pool is empty");
  }
  Expect(ran.load() == kTasks, "every posted task ran once");
  Expect(most_blocked.load() >= 1, "writers waited in BlockingRegions");
  auto n = CountRows(*db);
  Expect(n.has_value() && *n == written.load(), "every acknowledged write from the pool is there");
  std::printf("handler pool: %d tasks, %d writes, %d reads\n", ran.load(), written.load(),
              reads.load());
}

// The revoked-token snapshot (auth/token_revocations.h): threads verify while others
// revoke tokens and grants and mark the snapshot stale; refresh_every 0 makes every call
// due, so refreshes and readers overlap all the time. No answer may be "unavailable", and
// once the writers are done every revocation is seen.
void RevokedTokenSnapshot(const std::string& dir) {
  auto db = crmd::store::Open("sqlite:" + dir + "/tsan-revoked.db", 4);
  Expect(db.has_value(), "the database opens and migrates");
  crmd::FakeClock clock;
  crmd::auth::RevokedTokens revoked(**db, clock, std::chrono::milliseconds(0));
  const int64_t now = clock.NowUnix();
  std::atomic<int> answered{0};
  Parallel([&](int t) {
    for (int i = 0; i < 60; ++i) {
      const std::string jti = "j" + std::to_string(t) + "-" + std::to_string(i);
      if (t % 4 == 0) {
        auto w = (*db)->Write([&](crmd::store::Conn& c) -> crmd::Status {
          auto a = c.Exec(
              "INSERT INTO access_tokens (jti, grant_id, client_id, expires_at, revoked_at) "
              "VALUES (?, 'g', 'c', ?, ?)",
              {jti, now + 3600, now});
          if (!a) return crmd::Fail(a.error());
          auto g = c.Exec(
              "INSERT INTO grants (grant_id, client_id, scope, resource, created_at, revoked_at) "
              "VALUES (?, 'c', 's', 'r', ?, ?)",
              {"g" + jti, now, now});
          if (!g) return crmd::Fail(g.error());
          return crmd::Ok();
        });
        Expect(w.has_value(), "a revocation commits");
        revoked.MarkStale();
      } else {
        auto r = revoked.IsRevoked("j0-" + std::to_string(i), "gj4-" + std::to_string(i));
        Expect(r.has_value(), "the snapshot answers while it is refreshed");
        ++answered;
      }
    }
  });
  revoked.MarkStale();
  for (int t = 0; t < kThreads; t += 4)
    for (int i = 0; i < 60; ++i) {
      const std::string jti = "j" + std::to_string(t) + "-" + std::to_string(i);
      auto by_jti = revoked.IsRevoked(jti, "");
      auto by_grant = revoked.IsRevoked("other", "g" + jti);
      Expect(by_jti && *by_jti && by_grant && *by_grant, "every revocation is seen in the end");
    }
  std::printf("revoked tokens: %d answers during refreshes\n", answered.load());
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "/tmp";
  Sessions();
  RateLimits();
  VerifiedTokenCache();
  RequestStates();
  SqlitePool(dir);
  HandlerPool(dir);
  RevokedTokenSnapshot(dir);
  std::printf("tsan: 7 scenarios passed\n");
  return 0;
}

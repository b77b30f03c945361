#pragma once
// The rate-limit repository (table rate_limits): one fixed-window counter per bucket,
// shared by every node. The only place where rate_limits' SQL lives.
//
// Promises: CurrentWindow applies the window arithmetic: a stored window that started at
// `start` counts while start + window_s > now; once it has run out (or when the bucket is
// unknown) the answer is a fresh window starting at `now` with count 0. StoreWindow
// replaces the bucket's window (insert or update).
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for StoreWindow and DeleteBucket
// (and for CurrentWindow when its answer decides what StoreWindow writes), otherwise
// inside Database::Read or Write.
#include <cstdint>
#include <string_view>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

struct RateWindow {
  int64_t start = 0;
  int64_t count = 0;
};

// With `lock`, the bucket's row (created empty if missing) stays locked until the
// transaction ends, so that concurrent counters on other nodes wait instead of both
// counting from the same value (PostgreSQL; SQLite's single writer holds the database).
Result<RateWindow> CurrentWindow(store::Conn& c, std::string_view bucket, int64_t window_s,
                                 int64_t now, bool lock = false);
Status StoreWindow(store::Conn& c, std::string_view bucket, const RateWindow& window);
Status DeleteBucket(store::Conn& c, std::string_view bucket);
// Deletes every window that started at or before `cutoff` (housekeeping); answers how many.
Result<int64_t> DeleteWindowsStartedBy(store::Conn& c, int64_t cutoff);

}  // namespace crmd::auth::repo

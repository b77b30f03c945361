#pragma once
// The sign-in failure repository (table sign_in_failures): the only place where its SQL
// lives. One row per bucket: an (account, source address) pair with its run of failures
// and the time before which it may not try again, or a source address with its failures
// in a fixed window (auth/sign_in_throttle.h decides what the numbers mean).
//
// Promises: EnsureFailureBucket never changes an existing row; LockFailureBucket reads the
// row so that no other transaction changes it until this one ends (FOR UPDATE on
// PostgreSQL; SQLite's single writer holds the database anyway), which is what lets a
// failure be counted before the password is checked without two attempts reading the
// same count.
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for every function.
#include <cstdint>
#include <string_view>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

struct FailureBucket {
  int64_t failures = 0;
  int64_t window_start = 0;   // when the counted run (or window) began
  int64_t blocked_until = 0;  // no attempt before this
  int64_t updated_at = 0;     // the last failure counted
};

// Inserts an empty bucket (no failures, window starting at `now`) unless it exists.
Status EnsureFailureBucket(store::Conn& c, std::string_view bucket, int64_t now);
// The bucket, locked until the transaction ends. kNotFound when it does not exist.
Result<FailureBucket> LockFailureBucket(store::Conn& c, std::string_view bucket);
Status StoreFailureBucket(store::Conn& c, std::string_view bucket, const FailureBucket& b);
Status ForgetFailureBucket(store::Conn& c, std::string_view bucket);
// Takes one failure back from a bucket whose window still starts at `window_start`.
Status RefundFailure(store::Conn& c, std::string_view bucket, int64_t window_start);
// Deletes buckets with no failure counted since `cutoff` that block nothing any more
// (housekeeping); answers how many.
Result<int64_t> DeleteFailureBucketsIdleSince(store::Conn& c, int64_t cutoff);

}  // namespace crmd::auth::repo

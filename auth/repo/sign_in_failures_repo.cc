#include "auth/repo/sign_in_failures_repo.h"

#include <string>

namespace crmd::auth::repo {

Status EnsureFailureBucket(store::Conn& c, std::string_view bucket, int64_t now) {
  return Discard(
      c.Exec("INSERT INTO sign_in_failures (bucket, failures, window_start, blocked_until, "
             "updated_at) VALUES (?, 0, ?, 0, ?) ON CONFLICT (bucket) DO NOTHING",
             {std::string(bucket), now, now}));
}

Result<FailureBucket> LockFailureBucket(store::Conn& c, std::string_view bucket) {
  auto row = c.QueryOne(
      "SELECT f.failures, f.window_start, f.blocked_until, f.updated_at FROM sign_in_failures f "
      "WHERE f.bucket = ?" +
          store::ForUpdateOf(c.dialect(), "f"),
      {std::string(bucket)});
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Errc::kNotFound, "no such bucket");
  return FailureBucket{.failures = (*row)->Int(0),
                       .window_start = (*row)->Int(1),
                       .blocked_until = (*row)->Int(2),
                       .updated_at = (*row)->Int(3)};
}

Status StoreFailureBucket(store::Conn& c, std::string_view bucket, const FailureBucket& b) {
  return Discard(
      c.Exec("UPDATE sign_in_failures SET failures = ?, window_start = ?, blocked_until = ?, "
             "updated_at = ? WHERE bucket = ?",
             {b.failures, b.window_start, b.blocked_until, b.updated_at, std::string(bucket)}));
}

Status ForgetFailureBucket(store::Conn& c, std::string_view bucket) {
  return Discard(c.Exec("DELETE FROM sign_in_failures WHERE bucket = ?", {std::string(bucket)}));
}

Status RefundFailure(store::Conn& c, std::string_view bucket, int64_t window_start) {
  return Discard(
      c.Exec("UPDATE sign_in_failures SET failures = failures - 1 WHERE bucket = ? AND "
             "window_start = ? AND failures > 0",
             {std::string(bucket), window_start}));
}

Result<int64_t> DeleteFailureBucketsIdleSince(store::Conn& c, int64_t cutoff) {
  return c.Exec("DELETE FROM sign_in_failures WHERE updated_at <= ? AND blocked_until <= ?",
                {cutoff, cutoff});
}

}  // namespace crmd::auth::repo

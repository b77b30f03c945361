#include "auth/repo/rate_limits_repo.h"

#include <string>

namespace crmd::auth::repo {

Result<RateWindow> CurrentWindow(store::Conn& c, std::string_view bucket, int64_t window_s,
                                 int64_t now, bool lock) {
  if (lock) {
    auto ins = c.Exec(
        "INSERT INTO rate_limits (bucket, window_start, count) VALUES (?, ?, 0) "
        "ON CONFLICT (bucket) DO NOTHING",
        {std::string(bucket), now});
    if (!ins) return Fail(ins.error());
  }
  auto row = c.QueryOne("SELECT r.window_start, r.count FROM rate_limits r WHERE r.bucket = ?" +
                            (lock ? store::ForUpdateOf(c.dialect(), "r") : std::string()),
                        {std::string(bucket)});
  if (!row) return Fail(row.error());
  if (*row && (*row)->Int(0) + window_s > now) return RateWindow{(*row)->Int(0), (*row)->Int(1)};
  return RateWindow{now, 0};
}

Status StoreWindow(store::Conn& c, std::string_view bucket, const RateWindow& w) {
  auto up = c.Exec(
      "INSERT INTO rate_limits (bucket, window_start, count) VALUES (?, ?, ?) "
      "ON CONFLICT (bucket) DO UPDATE SET window_start = excluded.window_start, "
      "count = excluded.count",
      {std::string(bucket), w.start, w.count});
  if (!up) return Fail(up.error());
  return Ok();
}

Status DeleteBucket(store::Conn& c, std::string_view bucket) {
  auto r = c.Exec("DELETE FROM rate_limits WHERE bucket = ?", {std::string(bucket)});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<int64_t> DeleteWindowsStartedBy(store::Conn& c, int64_t cutoff) {
  return c.Exec("DELETE FROM rate_limits WHERE window_start <= ?", {cutoff});
}

}  // namespace crmd::auth::repo

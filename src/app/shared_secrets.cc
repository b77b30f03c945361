#include "src/app/shared_secrets.h"

#include "src/core/crypto.h"

namespace crmd::app {

Result<std::string> SharedSecret(store::Database& db, const std::string& name, Random& random,
                                 const Clock& clock) {
  const std::string candidate = crypto::Base64UrlEncode(random.Bytes(32));
  auto stored = db.Write([&](store::Conn& c) -> Result<std::string> {
    // Two nodes starting at once both try; the write lock lets one win and both read it.
    auto ins = c.Exec(
        "INSERT INTO server_secrets (name, secret, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT (name) DO NOTHING",
        {name, candidate, clock.NowUnix()});
    if (!ins) return Fail(ins.error());
    auto row = c.QueryOne("SELECT secret FROM server_secrets WHERE name = ?", {name});
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Error::Internal("server secret vanished: " + name));
    return (*row)->Str(0);
  });
  if (!stored) return Fail(stored.error());
  auto bytes = crypto::Base64UrlDecode(*stored);
  if (!bytes || bytes->size() < 32)
    return Fail(Error::Internal("server secret unreadable: " + name));
  return *bytes;
}

}  // namespace crmd::app

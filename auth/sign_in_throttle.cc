#include "auth/sign_in_throttle.h"

#include <algorithm>

#include "auth/repo/sign_in_failures_repo.h"
#include "auth/users.h"
#include "src/core/crypto.h"

namespace crmd::auth {

int64_t SignInDelay(const SignInThrottleOptions& o, int64_t failures) {
  if (failures < o.free_failures) return 0;
  int64_t delay = o.first_delay_s;
  for (int64_t i = o.free_failures; i < failures && delay < o.max_delay_s; ++i) delay *= 2;
  return std::min(delay, o.max_delay_s);
}

std::string TooManySignInAttempts(int64_t retry_after) {
  std::string wait;
  if (retry_after < 60) {
    wait = std::to_string(retry_after) + (retry_after == 1 ? " second." : " seconds.");
  } else {
    int64_t minutes = (retry_after + 59) / 60;
    wait = std::to_string(minutes) + (minutes == 1 ? " minute." : " minutes.");
  }
  return "Too many failed sign-in attempts. Try again in " + wait;
}

Result<SignInPermit> SignInThrottle::Reserve(std::string_view account, std::string_view address) {
  auto norm = NormalizeEmail(account);
  SignInPermit base;
  base.pair_bucket =
      "pair:" + crypto::Sha256Hex(norm ? *norm : std::string(account)) + ":" + std::string(address);
  base.address_bucket = "address:" + std::string(address);
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<SignInPermit> {
    SignInPermit permit = base;
    // Always the address first, then the pair: one lock order for every transaction.
    for (const auto* bucket : {&permit.address_bucket, &permit.pair_bucket})
      if (auto st = repo::EnsureFailureBucket(c, *bucket, now); !st) return Fail(st.error());
    auto by_address = repo::LockFailureBucket(c, permit.address_bucket);
    if (!by_address) return Fail(by_address.error());
    auto pair = repo::LockFailureBucket(c, permit.pair_bucket);
    if (!pair) return Fail(pair.error());

    const RateLimit& window = options_.per_address;
    if (by_address->window_start + window.window_s <= now)
      *by_address = {.failures = 0, .window_start = now, .blocked_until = 0, .updated_at = now};
    if (pair->updated_at + options_.forget_after_s <= now && pair->blocked_until <= now)
      *pair = {.failures = 0, .window_start = now, .blocked_until = 0, .updated_at = now};

    int64_t wait = 0;
    if (pair->blocked_until > now) wait = pair->blocked_until - now;
    if (by_address->failures >= window.limit)
      wait = std::max(wait, by_address->window_start + window.window_s - now);
    if (wait > 0) {
      // Refused attempts are not counted: a flood does not extend the wait.
      permit.allowed = false;
      permit.retry_after = std::max<int64_t>(wait, 1);
      return permit;
    }
    ++pair->failures;
    pair->updated_at = now;
    if (int64_t delay = SignInDelay(options_, pair->failures); delay > 0)
      pair->blocked_until = now + delay;
    ++by_address->failures;
    by_address->updated_at = now;
    if (auto st = repo::StoreFailureBucket(c, permit.pair_bucket, *pair); !st)
      return Fail(st.error());
    if (auto st = repo::StoreFailureBucket(c, permit.address_bucket, *by_address); !st)
      return Fail(st.error());
    permit.allowed = true;
    permit.address_window_start = by_address->window_start;
    return permit;
  });
}

Status SignInThrottle::Succeeded(const SignInPermit& permit) {
  if (!permit.allowed) return Ok();
  // The address first, then the pair: Reserve's lock order, so the two never deadlock.
  return db_.Write([&](store::Conn& c) -> Status {
    if (auto st = repo::RefundFailure(c, permit.address_bucket, permit.address_window_start); !st)
      return st;
    return repo::ForgetFailureBucket(c, permit.pair_bucket);
  });
}

}  // namespace crmd::auth

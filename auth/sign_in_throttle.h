#pragma once
// Throttling of password sign-in (the OAuth login page and the console's sign-in), kept in
// the database (table sign_in_failures) so that every node counts against the same budget.
//
// Two counters, neither of which lets a stranger lock a person out:
//  - per account and source address together: the first `free_failures` failures cost
//    nothing; from then on each failure makes that pair wait `first_delay_s`, doubling with
//    every further failure up to `max_delay_s`. A guesser slows only itself down: the owner
//    signing in from another address is not affected. A pair's failures are forgotten
//    after `forget_after_s` without one, and at once when it signs in.
//  - per source address, any account: `per_address` failures in a fixed window, against
//    spraying one password over many accounts.
// There is deliberately no limit per account alone: ten guesses from anywhere must not
// keep the owner out.
//
// No race: Reserve counts the attempt as a failure before the password is checked, in one
// transaction that locks both counters, so parallel attempts cannot check more passwords
// than the limits allow; Succeeded takes the count back.
//
// Thread-safe (all state is in the database).
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/rate_limit.h"
#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

struct SignInThrottleOptions {
  int64_t free_failures = 5;  // per account and address, before any delay
  int64_t first_delay_s = 30;
  int64_t max_delay_s = 3600;
  int64_t forget_after_s = 24 * 3600;
  RateLimit per_address = {.limit = 20, .window_s = 15 * 60};  // failures, any account
};

// The answer of Reserve. When `allowed`, one failure is already counted for this attempt.
struct SignInPermit {
  bool allowed = false;
  int64_t retry_after = 0;  // seconds, when refused
  std::string pair_bucket;
  std::string address_bucket;
  int64_t address_window_start = 0;
};

// The seconds a pair waits after its `failures`-th failure (0 while they are free).
int64_t SignInDelay(const SignInThrottleOptions& options, int64_t failures);
// The sentence shown with a 429: "Too many failed sign-in attempts. Try again in ...".
std::string TooManySignInAttempts(int64_t retry_after);

class SignInThrottle {
 public:
  SignInThrottle(store::Database& db, const Clock& clock, SignInThrottleOptions options = {})
      : db_(db), clock_(clock), options_(options) {}
  SignInThrottle(const SignInThrottle&) = delete;
  SignInThrottle& operator=(const SignInThrottle&) = delete;

  // Decides whether `address` may try a password for `account` now, and if so counts the
  // attempt as a failure. `account` is the email as typed (normalised here when it can
  // be; unknown accounts are counted like known ones, so the answer reveals nothing).
  Result<SignInPermit> Reserve(std::string_view account, std::string_view address);
  // The password was right: forgets the pair's failures and takes back the address's.
  Status Succeeded(const SignInPermit& permit);

 private:
  store::Database& db_;
  const Clock& clock_;
  const SignInThrottleOptions options_;
};

}  // namespace crmd::auth

#pragma once
// What every sending loop of a node shares (campaigns, automation and sequence steps,
// double opt-in): the transport choice (SMTP through libcurl, or .eml files when no
// smtp_url is set), the DKIM signer, the node's send rate (a token bucket), the
// relay-down backoff, and the link context of messages.
//
// Thread-safe. Transports are not: each sending thread asks for its own.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/mail/dkim.h"
#include "src/mail/transport.h"
#include "src/mail/verp.h"
#include "src/marketing/campaign_render.h"

namespace crmd::jobs {

struct MailRuntimeOptions {
  std::string smtp_url;  // empty: FileTransport under mail_dir
  std::string mail_dir = "var/mail";
  double rate_per_second = 20;  // 0: unthrottled
  std::optional<mail::DkimOptions> dkim;
  marketing::MailContext context;    // links, default sender (mail_from)
  int64_t relay_backoff_max_s = 60;  // longest pause while the relay is down
  // VERP return paths (bounce_domain set): the envelope sender of every message.
  std::optional<mail::VerpAddresses> verp;
};

class MailRuntime {
 public:
  // Fails when the DKIM key cannot be loaded or the smtp_url is malformed.
  static Result<std::unique_ptr<MailRuntime>> Create(MailRuntimeOptions options,
                                                     const Clock& clock);

  // A new transport for one sending thread.
  std::unique_ptr<mail::Transport> NewTransport() const;
  bool writes_files() const { return options_.smtp_url.empty(); }

  // The envelope sender (SMTP MAIL FROM) of a message from `from`: its VERP return path
  // for `ref` when bounce_domain is set, else `from` itself.
  std::string EnvelopeSender(const mail::VerpRef& ref, const std::string& from) const {
    return options_.verp ? options_.verp->ReturnPath(ref) : from;
  }

  // RFC 5322 bytes of `m`, DKIM-signed when a key is configured.
  Result<std::string> Render(const mail::Message& m) const;

  // Blocks until the node's rate allows one more message, or `stop` is set (then false).
  bool Throttle(const bool& stop, std::mutex& mu, std::condition_variable& cv);
  // Gives back a turn Throttle granted that no message used.
  void ReturnTurn();

  // Leases and the rate (a message starts only while half its lease is left, or another
  // worker may lease it again before it is out): how many messages to lease at once, no
  // more than the rate sends in half a lease and at most `batch`; and whether a message
  // whose lease ends at `lease_until` may still start.
  int LeaseBatch(int batch, int64_t lease_s) const;
  bool MayStart(int64_t lease_until, int64_t lease_s) const;

  // The relay failed at connection level: every thread holds off, doubling up to
  // relay_backoff_max_s. Returns the unix time sending may resume.
  int64_t RelayDown();
  void RelayUp();
  // 0 when sending may go on; else the unix time it may resume.
  int64_t PausedUntil() const;

  const marketing::MailContext& context() const { return options_.context; }
  const MailRuntimeOptions& options() const { return options_; }

 private:
  MailRuntime(MailRuntimeOptions options, const Clock& clock)
      : options_(std::move(options)), clock_(clock), refilled_(clock.Monotonic()) {}

  const MailRuntimeOptions options_;
  const Clock& clock_;
  std::optional<mail::DkimSigner> dkim_;

  mutable std::mutex mu_;
  double tokens_ = 1;
  MonotonicTime refilled_;
  int64_t backoff_s_ = 0;
  int64_t paused_until_ = 0;
};

}  // namespace crmd::jobs

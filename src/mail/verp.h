#pragma once
// VERP return paths (docs/mail.md, "Bounce mailbox"): every message crmd sends goes out
// with the envelope sender bounce+<token>@<bounce_domain>, so a delivery status
// notification or a feedback report that comes back to that address says which message
// it is about, whatever the reporting server kept of the original.
//
// The token is "<kind><owner>-<contact>-<mac>": kind c (campaign), s (sequence), a
// (automation step), o (any other message, owner 0); the MAC is the first 10 bytes of
// HMAC-SHA256(secret, "verp1:" + the rest) in lowercase base32, so a token cannot be made
// for another message or contact without the secret, and survives mail systems that fold
// the local part to lower case. Nothing is stored: the secret (server_secrets) alone makes
// and checks tokens. Immutable after construction; thread-safe.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crmd::mail {

struct VerpRef {
  char kind = 'c';  // c | s | a | o
  int64_t owner_id = 0;
  int64_t contact_id = 0;
  bool operator==(const VerpRef&) const = default;
};

class VerpAddresses {
 public:
  // REQUIRES: `secret` has at least 32 bytes of entropy; `domain` a host name.
  VerpAddresses(std::string secret, std::string domain)
      : secret_(std::move(secret)), domain_(std::move(domain)) {}

  const std::string& domain() const { return domain_; }
  // bounce+<token>@<domain>.
  std::string ReturnPath(const VerpRef& ref) const;
  // The reference of a return path this server made (any case; a "bounce+...@domain" of
  // another domain is not ours); nullopt when malformed or forged.
  std::optional<VerpRef> Parse(std::string_view address) const;

 private:
  std::string Mac(std::string_view body) const;

  const std::string secret_;
  const std::string domain_;
};

}  // namespace crmd::mail

#pragma once
// The hosts a request may name (config `allowed_hosts`). The listener checks the Host of
// every request (or the host a trusted proxy forwarded, src/http/forwarding.h) against it
// before routing, and answers any other host 421 Misdirected Request (RFC 9110 §15.5.20):
// a Host that names somebody else is how DNS rebinding and Host-header poisoning reach a
// server. docs/http.md describes the entries.
//
// Entries, compared case-insensitively, a trailing dot on a name ignored:
//   host            any port      crm.example.com, 127.0.0.1, [::1]
//   host:port       that port     crm.example.com:8443 (a Host without a port is the
//                                 scheme's default port, 80 or 443)
//   *.domain[:port] any name below domain, not domain itself
//   *               any host (the check is off)
// An empty list allows every host (a bare Server in tests); the composition root passes
// DefaultAllowedHosts() when the operator set none.
//
// Built once at startup; immutable afterwards, so thread-safe. Allows() does not allocate.
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "src/core/result.h"

namespace crmd::http {

class HostAllowList {
 public:
  // Allows every host.
  HostAllowList() = default;
  // Fails (kInvalidArgument) on an entry that is not one of the forms above.
  static Result<HostAllowList> Parse(const std::vector<std::string>& entries);

  // `host` is a Host field value that passed RFC 9112 §3.2 syntax (IsValidHostValue);
  // `https` says which default port a Host without a port means.
  bool Allows(std::string_view host, bool https) const;
  bool AllowsAny() const { return any_; }

 private:
  // Case-insensitive hashing and equality, transparent so that lookups with a
  // string_view do not build a std::string.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const;
  };
  struct Eq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const;
  };
  using Set = std::unordered_set<std::string, Hash, Eq>;
  struct Suffix {
    std::string domain;  // ".example.com", lower case
    std::string port;    // empty: any port
  };

  bool any_ = true;
  Set any_port_;   // "crm.example.com", "[::1]"
  Set with_port_;  // "crm.example.com:8443"
  std::vector<Suffix> wildcards_;
};

// The default when `allowed_hosts` is empty: the host of the issuer (public_base_url, any
// port) and the loopback names localhost, 127.0.0.1 and [::1] (any port).
std::vector<std::string> DefaultAllowedHosts(std::string_view issuer);

}  // namespace crmd::http

#pragma once
// DNS lookups for email validation and the pre-send check, behind an interface so unit
// tests use a fake. SystemResolver asks with res_nquery (libresolv): the system's name
// servers, or the one `dns_server` names (then A/AAAA are asked of it too, instead of
// getaddrinfo). It blocks, so call it from worker threads only. Thread-safe.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/core/result.h"

namespace crmd::crm {

struct DnsAnswer {
  bool domain_exists = false;  // false on NXDOMAIN
  bool has_mx = false;
  bool null_mx = false;      // RFC 7505 "MX 0 ." : the domain accepts no mail
  bool has_address = false;  // A or AAAA
};

struct TxtAnswer {
  bool name_exists = false;          // false on NXDOMAIN
  std::vector<std::string> records;  // each record's strings joined (RFC 7208 §3.3)
};

class Resolver {
 public:
  virtual ~Resolver() = default;
  // `domain` is ASCII (punycode). kUnavailable on a temporary failure (SERVFAIL, timeout).
  virtual Result<DnsAnswer> Lookup(const std::string& domain) = 0;
  // The TXT records of `name`. kUnavailable on a temporary failure or timeout.
  virtual Result<TxtAnswer> Txt(const std::string& name) {
    (void)name;
    return Fail(Errc::kUnavailable, "TXT lookups are not supported by this resolver");
  }
};

struct ResolverOptions {
  // "host:port" with an IPv4 address (config dns_server); empty: the system's resolver.
  std::string server;
  int timeout_s = 2;  // per attempt
  int attempts = 2;
};

// REQUIRES: options.server is empty or valid (core::ValidateDnsServer, config checks it).
std::unique_ptr<Resolver> MakeSystemResolver(ResolverOptions options = {});

}  // namespace crmd::crm

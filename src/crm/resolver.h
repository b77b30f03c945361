#pragma once
// DNS lookups for email validation, behind an interface so tests use a fake.
// SystemResolver uses res_query (libresolv) for MX and getaddrinfo for A/AAAA; it blocks,
// so call it from worker threads only. Thread-safe.
#include <memory>
#include <string>

#include "src/core/result.h"

namespace crmd::crm {

struct DnsAnswer {
  bool domain_exists = false;  // false on NXDOMAIN
  bool has_mx = false;
  bool null_mx = false;      // RFC 7505 "MX 0 ." : the domain accepts no mail
  bool has_address = false;  // A or AAAA
};

class Resolver {
 public:
  virtual ~Resolver() = default;
  // `domain` is ASCII (punycode). kUnavailable on a temporary failure (SERVFAIL, timeout).
  virtual Result<DnsAnswer> Lookup(const std::string& domain) = 0;
};

std::unique_ptr<Resolver> MakeSystemResolver();

}  // namespace crmd::crm

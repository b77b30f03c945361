#pragma once
// Who the client is when crmd sits behind reverse proxies (config `trusted_proxies`).
//
// Only when the TCP peer is a trusted proxy are its forwarding fields believed; from
// anybody else they are ignored entirely. The fields are read from the right, where the
// nearest proxy appended what it saw: each address that is itself a trusted proxy is
// skipped, and the first one that is not is the client. An entry that is not an address
// (RFC 7239 "unknown", an obfuscated "_identifier", garbage) ends the walk: what lies to
// its left was written by someone crmd cannot vouch for, so the client is the last
// address reached.
//
// Sources, one per request:
//   - X-Forwarded-For, X-Forwarded-Proto, X-Forwarded-Host when any of them is present.
//     They are what nginx, HAProxy and the cloud load balancers set, and a proxy that sets
//     them passes a client's own Forwarded field through untouched, so a client could
//     forge one if Forwarded won.
//   - otherwise Forwarded (RFC 7239 §4: for=, proto=, host= of the chosen element). A
//     Forwarded field that does not parse is ignored as a whole.
//
// Pure functions over immutable data; thread-safe.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/result.h"

namespace crmd::http {

// An IPv4 or IPv6 address as 16 bytes; IPv4 as the IPv4-mapped IPv6 ::ffff:a.b.c.d, so
// that a peer on a dual-stack socket and its IPv4 spelling are the same address.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};
  bool operator==(const IpAddress&) const = default;
};

// "192.0.2.1", "2001:db8::1" (no brackets, no port, no zone).
std::optional<IpAddress> ParseIp(std::string_view text);
// Canonical text: dotted quad for an IPv4 (also IPv4-mapped) address, RFC 5952 for IPv6.
std::string IpToString(const IpAddress& ip);

// A node as a forwarding field spells it: "192.0.2.1", "192.0.2.1:4711",
// "[2001:db8::1]", "[2001:db8::1]:4711", or a bare IPv6 address (X-Forwarded-For).
// nullopt for "unknown", "_obfuscated" and anything else that is not an address.
std::optional<IpAddress> ParseNode(std::string_view node);

// The set of trusted proxies: addresses and CIDR ranges, IPv4 and IPv6.
class ProxyTrust {
 public:
  ProxyTrust() = default;  // trusts nobody
  // Entries: "10.0.0.5", "10.0.0.0/8", "::1", "[::1]", "fd00::/8". Fails
  // (kInvalidArgument) on anything else.
  static Result<ProxyTrust> Parse(const std::vector<std::string>& entries);

  bool empty() const { return ranges_.empty(); }
  bool Trusts(const IpAddress& ip) const;

 private:
  struct Range {
    IpAddress base;  // host bits cleared
    int prefix = 128;
  };
  std::vector<Range> ranges_;
};

// One element of a Forwarded field (RFC 7239 §4), values unquoted. A parameter that is
// absent is empty.
struct ForwardedElement {
  std::string for_node;
  std::string proto;
  std::string host;
};

// Parses every Forwarded field line of a request, in order, as one list. nullopt when
// any line is malformed (bad token, unterminated quoted-string, a parameter twice in one
// element, nothing but whitespace, ...).
std::optional<std::vector<ForwardedElement>> ParseForwarded(
    const std::vector<std::string_view>& field_values);

// What a handler is told about the client.
struct ClientView {
  std::string ip;          // the client address (canonical text)
  bool https = false;      // the scheme the client used
  std::string host;        // a forwarded host (valid host[:port]); empty: none, use Host
  bool forwarded = false;  // ip, https or host came from a trusted proxy's fields
};

// REQUIRES: `fields` are the request's header fields in order (names any case).
// `peer_trusted` is trust.Trusts(peer), computed once per connection.
ClientView ResolveClient(const IpAddress& peer, bool peer_trusted, bool tls,
                         const std::vector<std::pair<std::string_view, std::string_view>>& fields,
                         const ProxyTrust& trust);

}  // namespace crmd::http

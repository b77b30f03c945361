#include "src/crm/resolver.h"

#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>

#include <cstring>

namespace crmd::crm {
namespace {

class SystemResolver final : public Resolver {
 public:
  Result<DnsAnswer> Lookup(const std::string& domain) override {
    DnsAnswer a;
    // res_n* with a per-call state: thread-safe without the global _res.
    struct __res_state state;
    std::memset(&state, 0, sizeof state);
    if (res_ninit(&state) != 0) return Fail(Errc::kUnavailable, "resolver unavailable");
    unsigned char buf[4096];
    int len = res_nquery(&state, domain.c_str(), ns_c_in, ns_t_mx, buf, sizeof buf);
    int herr = state.res_h_errno;
    res_nclose(&state);
    if (len < 0) {
      if (herr == HOST_NOT_FOUND) return a;  // NXDOMAIN: domain_exists = false
      if (herr == TRY_AGAIN) return Fail(Errc::kUnavailable, "DNS temporary failure");
      // NO_DATA / NO_RECOVERY: the name exists (or cannot be told); fall back to A/AAAA.
    } else {
      ns_msg msg;
      if (ns_initparse(buf, len, &msg) == 0) {
        int count = ns_msg_count(msg, ns_s_an);
        for (int i = 0; i < count; ++i) {
          ns_rr rr;
          if (ns_parserr(&msg, ns_s_an, i, &rr) != 0 || ns_rr_type(rr) != ns_t_mx) continue;
          if (ns_rr_rdlen(rr) < 3) continue;
          char host[NS_MAXDNAME];
          if (dn_expand(ns_msg_base(msg), ns_msg_end(msg), ns_rr_rdata(rr) + 2, host, sizeof host) <
              0)
            continue;
          if (host[0] == '\0' || std::strcmp(host, ".") == 0)
            a.null_mx = true;  // RFC 7505
          else
            a.has_mx = true;
        }
      }
    }
    a.domain_exists = true;
    if (a.has_mx) a.null_mx = false;  // a real MX beside "." still receives mail
    if (!a.has_mx && !a.null_mx) {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* res = nullptr;
      int rc = getaddrinfo(domain.c_str(), nullptr, &hints, &res);
      if (rc == 0) {
        a.has_address = res != nullptr;
        freeaddrinfo(res);
      } else if (rc == EAI_AGAIN) {
        return Fail(Errc::kUnavailable, "DNS temporary failure");
      } else if (rc == EAI_NONAME && len < 0 && herr == HOST_NOT_FOUND) {
        a.domain_exists = false;
      }
    }
    return a;
  }
};

}  // namespace

std::unique_ptr<Resolver> MakeSystemResolver() { return std::make_unique<SystemResolver>(); }

}  // namespace crmd::crm

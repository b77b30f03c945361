#include "src/crm/resolver.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>

#include <cstring>

namespace crmd::crm {

namespace {

// One res_n* state per query: thread-safe without the global _res.
class ResState {
 public:
  explicit ResState(const ResolverOptions& o) {
    std::memset(&state_, 0, sizeof state_);
    ok_ = res_ninit(&state_) == 0;
    if (!ok_) return;
    state_.retrans = o.timeout_s;
    state_.retry = o.attempts;
    if (o.server.empty()) return;
    auto colon = o.server.rfind(':');
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    inet_pton(AF_INET, o.server.substr(0, colon).c_str(), &sa.sin_addr);
    sa.sin_port = htons(static_cast<uint16_t>(std::stoi(o.server.substr(colon + 1))));
    state_.nsaddr_list[0] = sa;
    state_.nscount = 1;
  }
  ~ResState() {
    if (ok_) res_nclose(&state_);
  }
  ResState(const ResState&) = delete;
  ResState& operator=(const ResState&) = delete;

  bool ok() const { return ok_; }
  // The answer's length, or -1 with h_errno() set.
  int Query(const std::string& name, int type, unsigned char* buf, int size) {
    return res_nquery(&state_, name.c_str(), ns_c_in, type, buf, size);
  }
  int h_errno_value() const { return state_.res_h_errno; }

 private:
  struct __res_state state_;
  bool ok_ = false;
};

// The answer records of `type` in a reply.
template <typename F>
void EachAnswer(const unsigned char* buf, int len, int type, F f) {
  ns_msg msg;
  if (ns_initparse(buf, len, &msg) != 0) return;
  int count = ns_msg_count(msg, ns_s_an);
  for (int i = 0; i < count; ++i) {
    ns_rr rr;
    if (ns_parserr(&msg, ns_s_an, i, &rr) != 0 || ns_rr_type(rr) != type) continue;
    f(msg, rr);
  }
}

std::string JoinTxt(const ns_rr& rr) {
  std::string out;
  const unsigned char* p = ns_rr_rdata(rr);
  const unsigned char* end = p + ns_rr_rdlen(rr);
  while (p < end) {
    size_t n = *p++;
    if (static_cast<size_t>(end - p) < n) break;
    out.append(reinterpret_cast<const char*>(p), n);
    p += n;
  }
  return out;
}

class SystemResolver final : public Resolver {
 public:
  explicit SystemResolver(ResolverOptions o) : o_(std::move(o)) {}

  Result<DnsAnswer> Lookup(const std::string& domain) override {
    DnsAnswer a;
    ResState state(o_);
    if (!state.ok()) return Fail(Errc::kUnavailable, "resolver unavailable");
    unsigned char buf[4096];
    int len = state.Query(domain, ns_t_mx, buf, sizeof buf);
    int herr = state.h_errno_value();
    if (len < 0) {
      if (herr == HOST_NOT_FOUND) return a;  // NXDOMAIN: domain_exists = false
      if (herr == TRY_AGAIN) return Fail(Errc::kUnavailable, "DNS temporary failure");
      // NO_DATA / NO_RECOVERY: the name exists (or cannot be told); fall back to A/AAAA.
    } else {
      EachAnswer(buf, len, ns_t_mx, [&](const ns_msg& msg, const ns_rr& rr) {
        if (ns_rr_rdlen(rr) < 3) return;
        char host[NS_MAXDNAME];
        if (dn_expand(ns_msg_base(msg), ns_msg_end(msg), ns_rr_rdata(rr) + 2, host, sizeof host) <
            0)
          return;
        if (host[0] == '\0' || std::strcmp(host, ".") == 0)
          a.null_mx = true;  // RFC 7505
        else
          a.has_mx = true;
      });
    }
    a.domain_exists = true;
    if (a.has_mx) a.null_mx = false;  // a real MX beside "." still receives mail
    if (!a.has_mx && !a.null_mx) {
      auto address = HasAddress(domain);
      if (!address) return Fail(address.error());
      a.has_address = *address;
    }
    return a;
  }

  Result<TxtAnswer> Txt(const std::string& name) override {
    TxtAnswer t;
    ResState state(o_);
    if (!state.ok()) return Fail(Errc::kUnavailable, "resolver unavailable");
    unsigned char buf[8192];
    int len = state.Query(name, ns_t_txt, buf, sizeof buf);
    if (len < 0) {
      int herr = state.h_errno_value();
      if (herr == HOST_NOT_FOUND) return t;
      if (herr == NO_DATA) {
        t.name_exists = true;
        return t;
      }
      return Fail(Errc::kUnavailable, "DNS lookup of " + name + " failed or timed out");
    }
    t.name_exists = true;
    EachAnswer(buf, len, ns_t_txt,
               [&](const ns_msg&, const ns_rr& rr) { t.records.push_back(JoinTxt(rr)); });
    return t;
  }

 private:
  // A or AAAA: getaddrinfo with the system's resolver (it also reads /etc/hosts), else
  // asked of dns_server.
  Result<bool> HasAddress(const std::string& domain) {
    if (o_.server.empty()) {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* res = nullptr;
      int rc = getaddrinfo(domain.c_str(), nullptr, &hints, &res);
      if (rc == 0) {
        bool any = res != nullptr;
        freeaddrinfo(res);
        return any;
      }
      if (rc == EAI_AGAIN) return Fail(Errc::kUnavailable, "DNS temporary failure");
      return false;
    }
    for (int type : {ns_t_a, ns_t_aaaa}) {
      ResState state(o_);
      if (!state.ok()) return Fail(Errc::kUnavailable, "resolver unavailable");
      unsigned char buf[4096];
      int len = state.Query(domain, type, buf, sizeof buf);
      if (len < 0 && state.h_errno_value() == TRY_AGAIN)
        return Fail(Errc::kUnavailable, "DNS temporary failure");
      bool found = false;
      if (len > 0) EachAnswer(buf, len, type, [&](const ns_msg&, const ns_rr&) { found = true; });
      if (found) return true;
    }
    return false;
  }

  const ResolverOptions o_;
};

}  // namespace

std::unique_ptr<Resolver> MakeSystemResolver(ResolverOptions options) {
  return std::make_unique<SystemResolver>(std::move(options));
}

}  // namespace crmd::crm

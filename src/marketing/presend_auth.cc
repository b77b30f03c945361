// Sender authentication of the pre-send check: spf, dkim, alignment, dmarc (presend.h).
#include <arpa/inet.h>

#include <algorithm>
#include <sstream>

#include "src/mail/dkim_key.h"
#include "src/marketing/presend.h"

namespace crmd::marketing {

using nlohmann::json;

json ToJson(const std::vector<PresendCheck>& checks) {
  json out = json::array();
  for (const auto& c : checks)
    out.push_back(
        {{"id", c.id}, {"severity", c.severity}, {"message", c.message}, {"detail", c.detail}});
  return out;
}

std::vector<std::string> ErrorIds(const std::vector<PresendCheck>& checks) {
  std::vector<std::string> out;
  for (const auto& c : checks)
    if (c.severity == "error") out.push_back(c.id);
  return out;
}

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return s;
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<std::string> Labels(const std::string& domain) {
  std::vector<std::string> out;
  std::stringstream in(domain);
  for (std::string label; std::getline(in, label, '.');)
    if (!label.empty()) out.push_back(label);
  return out;
}

bool IsIpv4(const std::string& s) {
  in_addr a{};
  return inet_pton(AF_INET, s.c_str(), &a) == 1;
}

}  // namespace

std::string OrganisationalDomain(const std::string& domain) {
  auto labels = Labels(Lower(domain));
  if (labels.size() <= 2) return Lower(domain);
  size_t keep = 2;
  // co.uk, com.au, org.nz ...: a short second-level label under a country code.
  const std::string& second = labels[labels.size() - 2];
  if (labels.back().size() == 2 && second.size() <= 3) keep = 3;
  std::string out;
  for (size_t i = labels.size() - keep; i < labels.size(); ++i)
    out += (out.empty() ? "" : ".") + labels[i];
  return out;
}

bool IsReservedDomain(const std::string& raw) {
  const std::string d = Lower(raw);
  if (d.empty() || IsIpv4(d) || d.front() == '[') return true;
  for (const char* name : {"example.com", "example.net", "example.org", "localhost"})
    if (d == name || EndsWith(d, std::string(".") + name)) return true;
  for (const char* tld : {".test", ".example", ".invalid", ".localhost"})
    if (EndsWith(d, tld)) return true;
  return d.find('.') == std::string::npos;
}

namespace {

// The relay of smtp_url, as SPF can name it: its host, and whether it is an IPv4 address.
struct Relay {
  std::string host;
  bool ipv4 = false;
  bool local = false;
};

Relay RelayOf(const std::string& smtp_url) {
  Relay r;
  auto scheme = smtp_url.find("://");
  if (scheme == std::string::npos) return r;
  std::string rest = smtp_url.substr(scheme + 3);
  rest = rest.substr(0, rest.find('/'));
  if (auto at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  if (!rest.empty() && rest.front() == '[') {
    r.host = rest.substr(1, rest.find(']') - 1);
  } else {
    r.host = rest.substr(0, rest.find(':'));
  }
  r.host = Lower(r.host);
  r.ipv4 = IsIpv4(r.host);
  r.local = r.host == "localhost" || r.host == "::1" || r.host.rfind("127.", 0) == 0;
  return r;
}

// Whether ip4:<net>[/<bits>] holds `ip`.
bool InIpv4Net(const std::string& net, const std::string& ip) {
  std::string base = net;
  int bits = 32;
  if (auto slash = net.find('/'); slash != std::string::npos) {
    base = net.substr(0, slash);
    bits = std::atoi(net.c_str() + slash + 1);
  }
  in_addr a{}, b{};
  if (inet_pton(AF_INET, base.c_str(), &a) != 1 || inet_pton(AF_INET, ip.c_str(), &b) != 1)
    return false;
  if (bits <= 0) return true;
  uint32_t mask = bits >= 32 ? 0xffffffffu : ~((1u << (32 - bits)) - 1);
  return (ntohl(a.s_addr) & mask) == (ntohl(b.s_addr) & mask);
}

struct SpfScan {
  bool names_relay = false;
  bool timed_out = false;
  int lookups = 0;  // RFC 7208 §4.6.4: at most 10 includes and redirects
};

std::string SpfRecord(const crm::TxtAnswer& t) {
  for (const auto& r : t.records)
    if (Lower(r.substr(0, 7)) == "v=spf1 " || Lower(r) == "v=spf1") return r;
  return "";
}

void ScanSpf(crm::Resolver& resolver, const std::string& record, const std::string& domain,
             const Relay& relay, SpfScan& scan) {
  std::stringstream in(record);
  for (std::string term; in >> term && !scan.names_relay;) {
    term = Lower(term);
    if (!term.empty() && std::string("+-~?").find(term.front()) != std::string::npos)
      term = term.substr(1);
    if (relay.ipv4 && term.rfind("ip4:", 0) == 0) {
      scan.names_relay = InIpv4Net(term.substr(4), relay.host);
      continue;
    }
    std::string target;
    for (const char* prefix : {"include:", "redirect=", "a:", "mx:", "exists:"})
      if (term.rfind(prefix, 0) == 0) target = term.substr(std::string(prefix).size());
    if ((term == "a" || term == "mx") && !relay.ipv4) target = domain;
    if (target.empty()) continue;
    if (!relay.ipv4 && OrganisationalDomain(target) == OrganisationalDomain(relay.host)) {
      scan.names_relay = true;
      continue;
    }
    const bool follow = term.rfind("include:", 0) == 0 || term.rfind("redirect=", 0) == 0;
    if (!follow || ++scan.lookups > 10) continue;
    auto t = resolver.Txt(target);
    if (!t) {
      scan.timed_out = true;
      continue;
    }
    ScanSpf(resolver, SpfRecord(*t), target, relay, scan);
  }
}

PresendCheck TimedOut(const char* id, const std::string& name) {
  return {.id = id,
          .severity = "warning",
          .message = "the DNS lookup of " + name + " failed or timed out; the " + id +
                     " record could not be checked",
          .detail = {{"name", name}}};
}

void CheckSpf(const SenderAuthOptions& o, const std::string& domain,
              std::vector<PresendCheck>& out) {
  auto t = o.resolver->Txt(domain);
  if (!t) return out.push_back(TimedOut("spf", domain));
  std::string record = SpfRecord(*t);
  if (record.empty())
    return out.push_back({.id = "spf",
                          .severity = "warning",
                          .message = "the sender's domain " + domain +
                                     " publishes no SPF record (a TXT record v=spf1 ...)",
                          .detail = {{"name", domain}}});
  Relay relay = RelayOf(o.smtp_url);
  if (relay.host.empty() || relay.local) return;
  SpfScan scan;
  ScanSpf(*o.resolver, record, domain, relay, scan);
  if (scan.names_relay) return;
  out.push_back({.id = "spf",
                 .severity = "warning",
                 .message = "the SPF record of " + domain + " does not name the relay " +
                            relay.host + " (smtp_url)" +
                            (scan.timed_out ? "; some of its includes could not be looked up" : ""),
                 .detail = {{"name", domain}, {"record", record}, {"relay", relay.host}}});
}

void CheckDkim(const SenderAuthOptions& o, const std::string& domain,
               std::vector<PresendCheck>& out) {
  if (o.dkim_private_key_file.empty()) {
    out.push_back({.id = "dkim",
                   .severity = "warning",
                   .message = "messages are not DKIM-signed: set dkim_private_key_file, "
                              "dkim_selector and dkim_domain"});
    return;
  }
  const std::string name = o.dkim_selector + "._domainkey." + o.dkim_domain;
  auto ours = mail::DkimPublicKeyFromFile(o.dkim_private_key_file);
  auto t = o.resolver->Txt(name);
  if (!t) {
    out.push_back(TimedOut("dkim", name));
  } else {
    std::string published;
    for (const auto& r : t->records)
      if (published.empty()) published = mail::DkimRecordPublicKey(r);
    if (published.empty())
      out.push_back({.id = "dkim",
                     .severity = "error",
                     .message = "no DKIM public key is published at " + name +
                                ": receivers cannot verify the signature",
                     .detail = {{"name", name}}});
    else if (!ours || published != *ours)
      out.push_back({.id = "dkim",
                     .severity = "error",
                     .message = "the DKIM key published at " + name +
                                " is not the public half of dkim_private_key_file: every "
                                "signature would fail",
                     .detail = {{"name", name}}});
  }
  if (OrganisationalDomain(o.dkim_domain) != OrganisationalDomain(domain))
    out.push_back({.id = "alignment",
                   .severity = "warning",
                   .message = "the DKIM domain " + o.dkim_domain +
                              " does not align with the sender's domain " + domain +
                              " (DMARC needs them to share an organisational domain)",
                   .detail = {{"dkim_domain", o.dkim_domain}, {"from_domain", domain}}});
}

void CheckDmarc(const SenderAuthOptions& o, const std::string& domain,
                std::vector<PresendCheck>& out) {
  std::vector<std::string> names = {"_dmarc." + domain};
  if (OrganisationalDomain(domain) != domain)
    names.push_back("_dmarc." + OrganisationalDomain(domain));
  for (const auto& name : names) {
    auto t = o.resolver->Txt(name);
    if (!t) return out.push_back(TimedOut("dmarc", name));
    for (const auto& r : t->records)
      if (Lower(r).rfind("v=dmarc1", 0) == 0) return;
  }
  out.push_back({.id = "dmarc",
                 .severity = "warning",
                 .message = "no DMARC record is published for " + domain + " (TXT at _dmarc." +
                            domain + ", v=DMARC1; ...)",
                 .detail = {{"name", names.front()}}});
}

}  // namespace

std::vector<PresendCheck> SenderAuthChecks::Check(const std::string& from_address) {
  if (!o_.resolver) return {};
  const std::string domain = Lower(from_address.substr(from_address.rfind('@') + 1));
  if (IsReservedDomain(domain))
    return {{.id = "spf",
             .severity = "warning",
             .message = "the sender's domain " + domain +
                        " is reserved for examples and tests: it has no DNS records to check",
             .detail = {{"name", domain}}}};
  const int64_t now = clock_.NowUnix();
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(domain);
    if (it != cache_.end() && it->second.first > now) return it->second.second;
  }
  auto found = Lookup(domain);
  std::lock_guard lock(mu_);
  if (cache_.size() > 1000) cache_.clear();
  cache_[domain] = {now + cache_s_.load(), found};
  return found;
}

std::vector<PresendCheck> SenderAuthChecks::Lookup(const std::string& domain) {
  std::vector<PresendCheck> out;
  CheckSpf(o_, domain, out);
  CheckDkim(o_, domain, out);
  CheckDmarc(o_, domain, out);
  return out;
}

}  // namespace crmd::marketing

#include "src/http/allowed_hosts.h"

#include <algorithm>
#include <array>

#include "src/core/http_types.h"
#include "src/http/request_checks.h"

namespace crmd::http {
namespace {

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

struct HostPort {
  std::string_view name;  // "crm.example.com", "[::1]"; a trailing dot removed
  std::string_view port;  // digits, or empty
};

// REQUIRES: IsValidHostValue(host).
HostPort Split(std::string_view host) {
  HostPort hp;
  size_t colon = host.empty() || host[0] != '[' ? host.find(':') : host.find("]:");
  if (colon != std::string_view::npos && host[colon] == ']') ++colon;
  hp.name = host.substr(0, colon);
  if (colon != std::string_view::npos) hp.port = host.substr(colon + 1);
  // A fully qualified name may end in a dot (RFC 1034 §3.1); "crm.example.com." is the
  // same host.
  if (hp.name.size() > 1 && hp.name.back() == '.') hp.name.remove_suffix(1);
  return hp;
}

bool EndsWithNoCase(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && IEquals(s.substr(s.size() - suffix.size()), suffix);
}

}  // namespace

size_t HostAllowList::Hash::operator()(std::string_view s) const {
  // FNV-1a over the lower-cased bytes.
  size_t h = 14695981039346656037ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(Lower(c));
    h *= 1099511628211ull;
  }
  return h;
}

bool HostAllowList::Eq::operator()(std::string_view a, std::string_view b) const {
  return IEquals(a, b);
}

Result<HostAllowList> HostAllowList::Parse(const std::vector<std::string>& entries) {
  HostAllowList list;
  list.any_ = entries.empty();
  for (const auto& raw : entries) {
    std::string entry = raw;
    std::transform(entry.begin(), entry.end(), entry.begin(), Lower);
    if (entry == "*") {
      list.any_ = true;
      continue;
    }
    bool wildcard = entry.rfind("*.", 0) == 0;
    std::string_view rest = wildcard ? std::string_view(entry).substr(2) : std::string_view(entry);
    if (rest.empty() || !IsValidHostValue(rest) || rest.find('*') != std::string_view::npos ||
        (wildcard && rest[0] == '['))
      return Fail(Errc::kInvalidArgument,
                  "allowed_hosts: \"" + raw + "\" is not host, host:port or *.domain");
    HostPort hp = Split(rest);
    if (wildcard) {
      list.wildcards_.push_back({"." + std::string(hp.name), std::string(hp.port)});
    } else if (hp.port.empty()) {
      list.any_port_.emplace(hp.name);
    } else {
      list.with_port_.emplace(std::string(hp.name) + ":" + std::string(hp.port));
    }
  }
  return list;
}

bool HostAllowList::Allows(std::string_view host, bool https) const {
  if (any_) return true;
  HostPort hp = Split(host);
  if (hp.name.empty()) return false;  // an empty Host names no host of ours
  if (any_port_.find(hp.name) != any_port_.end()) return true;
  std::string_view port = hp.port.empty() ? (https ? "443" : "80") : hp.port;
  // "name:port" in a buffer on the stack: no allocation on the request path. A DNS name
  // is at most 253 characters.
  std::array<char, 288> buf;
  if (hp.name.size() + 1 + port.size() <= buf.size()) {
    size_t n = hp.name.copy(buf.data(), hp.name.size());
    buf[n++] = ':';
    n += port.copy(buf.data() + n, port.size());
    if (with_port_.find(std::string_view(buf.data(), n)) != with_port_.end()) return true;
  }
  for (const auto& w : wildcards_) {
    if (hp.name.size() > w.domain.size() && EndsWithNoCase(hp.name, w.domain) &&
        (w.port.empty() || w.port == port))
      return true;
  }
  return false;
}

std::vector<std::string> DefaultAllowedHosts(std::string_view issuer) {
  std::vector<std::string> out = {"localhost", "127.0.0.1", "[::1]"};
  size_t scheme_end = issuer.find("://");
  std::string_view rest =
      scheme_end == std::string_view::npos ? issuer : issuer.substr(scheme_end + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  if (!authority.empty() && IsValidHostValue(authority)) out.emplace_back(Split(authority).name);
  return out;
}

}  // namespace crmd::http

#include "src/http/forwarding.h"

#include <arpa/inet.h>

#include <cstring>

#include "src/core/http_types.h"
#include "src/http/request_checks.h"
#include "src/http/syntax.h"

namespace crmd::http {
namespace {

using namespace syntax;

const uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool IsV4Mapped(const IpAddress& ip) { return std::memcmp(ip.bytes.data(), kV4Mapped, 12) == 0; }

// RFC 7239 §6.3 obfport and §6.2 port: digits or "_" followed by ALPHA / DIGIT / "." / "_" / "-".
bool IsNodePort(std::string_view p) {
  if (p.empty()) return false;
  if (p[0] == '_') {
    for (char c : p.substr(1))
      if (!IsAlnum(c) && c != '.' && c != '_' && c != '-') return false;
    return p.size() > 1;
  }
  if (p.size() > 5) return false;
  unsigned port = 0;
  for (char c : p) {
    if (!IsDigit(c)) return false;
    port = port * 10 + static_cast<unsigned>(c - '0');
  }
  return port <= 65535;
}

// One Forwarded field value: 1#forwarded-element, appended to `out`. False when malformed.
bool ParseForwardedValue(std::string_view v, std::vector<ForwardedElement>& out) {
  size_t i = 0;
  auto at_end = [&] { return i >= v.size(); };
  auto skip_ows = [&] {
    while (!at_end() && IsOws(v[i])) ++i;
  };
  bool any = false;
  while (true) {
    skip_ows();
    // forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] )
    ForwardedElement el;
    bool seen_for = false, seen_proto = false, seen_host = false, seen_by = false;
    bool pairs = false;
    while (!at_end() && v[i] != ',') {
      if (v[i] == ';') {
        ++i;
        skip_ows();
        continue;
      }
      size_t name_start = i;
      while (!at_end() && IsTchar(v[i])) ++i;
      std::string_view name = v.substr(name_start, i - name_start);
      if (name.empty() || at_end() || v[i] != '=') return false;
      ++i;
      std::string value;
      if (!at_end() && v[i] == '"') {
        ++i;
        bool closed = false;
        while (!at_end()) {
          char c = v[i++];
          if (c == '"') {
            closed = true;
            break;
          }
          if (c == '\\') {
            if (at_end()) return false;
            c = v[i++];
          }
          // qdtext / quoted-pair: HTAB, SP, VCHAR, obs-text; no other controls.
          if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return false;
          value.push_back(c);
        }
        if (!closed) return false;
      } else {
        size_t value_start = i;
        while (!at_end() && IsTchar(v[i])) ++i;
        if (i == value_start) return false;
        value.assign(v.substr(value_start, i - value_start));
      }
      // RFC 7239 §4: a parameter MUST NOT occur more than once per element.
      auto once = [](bool& seen) {
        if (seen) return false;
        seen = true;
        return true;
      };
      if (IEquals(name, "for")) {
        if (!once(seen_for)) return false;
        el.for_node = std::move(value);
      } else if (IEquals(name, "proto")) {
        if (!once(seen_proto)) return false;
        el.proto = std::move(value);
      } else if (IEquals(name, "host")) {
        if (!once(seen_host)) return false;
        el.host = std::move(value);
      } else if (IEquals(name, "by")) {
        if (!once(seen_by)) return false;
      }  // other parameters are extensions (RFC 7239 §5.5): ignored
      pairs = true;
      skip_ows();
      if (!at_end() && v[i] != ';' && v[i] != ',') return false;
    }
    if (pairs) {
      out.push_back(std::move(el));
      any = true;
    }
    if (at_end()) break;
    ++i;  // ','
  }
  return any;
}

// The host a proxy forwarded, if it is one crmd could have been addressed by.
std::string ForwardedHost(std::string_view host) {
  host = TrimOws(host);
  if (host.empty() || !IsValidHostValue(host)) return {};
  return std::string(host);
}

// "http"/"https" → whether it is https; anything else: not believed.
std::optional<bool> ForwardedProto(std::string_view proto) {
  proto = TrimOws(proto);
  if (IEquals(proto, "https")) return true;
  if (IEquals(proto, "http")) return false;
  return std::nullopt;
}

}  // namespace

std::optional<IpAddress> ParseIp(std::string_view text) {
  if (text.empty() || text.size() > 45) return std::nullopt;
  char buf[46];
  text.copy(buf, text.size());
  buf[text.size()] = '\0';
  IpAddress ip;
  unsigned char v4[4];
  if (inet_pton(AF_INET, buf, v4) == 1) {
    std::memcpy(ip.bytes.data(), kV4Mapped, 12);
    std::memcpy(ip.bytes.data() + 12, v4, 4);
    return ip;
  }
  if (inet_pton(AF_INET6, buf, ip.bytes.data()) == 1) return ip;
  return std::nullopt;
}

std::string IpToString(const IpAddress& ip) {
  char buf[INET6_ADDRSTRLEN];
  if (IsV4Mapped(ip)) {
    inet_ntop(AF_INET, ip.bytes.data() + 12, buf, sizeof buf);
  } else {
    inet_ntop(AF_INET6, ip.bytes.data(), buf, sizeof buf);
  }
  return buf;
}

std::optional<IpAddress> ParseNode(std::string_view node) {
  node = TrimOws(node);
  if (node.empty()) return std::nullopt;
  if (node[0] == '[') {
    size_t close = node.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    auto rest = node.substr(close + 1);
    if (!rest.empty() && (rest[0] != ':' || !IsNodePort(rest.substr(1)))) return std::nullopt;
    auto ip = ParseIp(node.substr(1, close - 1));
    // An IPv4 address has no brackets.
    if (!ip || IsV4Mapped(*ip)) return std::nullopt;
    return ip;
  }
  size_t colon = node.find(':');
  if (colon != std::string_view::npos && node.find(':', colon + 1) == std::string_view::npos) {
    // IPv4 with a port.
    if (!IsNodePort(node.substr(colon + 1))) return std::nullopt;
    auto ip = ParseIp(node.substr(0, colon));
    if (!ip || !IsV4Mapped(*ip)) return std::nullopt;
    return ip;
  }
  return ParseIp(node);  // IPv4, or a bare IPv6 address (X-Forwarded-For spells it so)
}

Result<ProxyTrust> ProxyTrust::Parse(const std::vector<std::string>& entries) {
  ProxyTrust trust;
  for (const auto& entry : entries) {
    std::string_view e = TrimOws(entry);
    std::string_view addr = e;
    int prefix = -1;
    if (size_t slash = e.find('/'); slash != std::string_view::npos) {
      addr = e.substr(0, slash);
      auto p = e.substr(slash + 1);
      if (p.empty() || p.size() > 3)
        prefix = -2;
      else {
        prefix = 0;
        for (char c : p) prefix = IsDigit(c) ? prefix * 10 + (c - '0') : -1000;
      }
    }
    if (addr.size() > 2 && addr.front() == '[' && addr.back() == ']')
      addr = addr.substr(1, addr.size() - 2);
    auto ip = ParseIp(addr);
    bool v4 = ip && IsV4Mapped(*ip) && addr.find(':') == std::string_view::npos;
    int max = v4 ? 32 : 128;
    if (!ip || prefix < -1 || prefix > max)
      return Fail(Errc::kInvalidArgument,
                  "trusted_proxies: \"" + entry + "\" is not an IP address or CIDR range");
    Range r{.base = *ip, .prefix = prefix == -1 ? 128 : (v4 ? prefix + 96 : prefix)};
    for (int bit = r.prefix; bit < 128; ++bit)
      r.base.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80u >> (bit % 8)));
    trust.ranges_.push_back(r);
  }
  return trust;
}

bool ProxyTrust::Trusts(const IpAddress& ip) const {
  for (const auto& r : ranges_) {
    int full = r.prefix / 8, rest = r.prefix % 8;
    if (std::memcmp(ip.bytes.data(), r.base.bytes.data(), full) != 0) continue;
    if (rest) {
      uint8_t mask = static_cast<uint8_t>(0xff00u >> rest);
      if ((ip.bytes[full] & mask) != r.base.bytes[full]) continue;
    }
    return true;
  }
  return false;
}

std::optional<std::vector<ForwardedElement>> ParseForwarded(
    const std::vector<std::string_view>& field_values) {
  std::vector<ForwardedElement> out;
  for (auto v : field_values)
    if (!ParseForwardedValue(v, out)) return std::nullopt;
  return out;
}

ClientView ResolveClient(const IpAddress& peer, bool peer_trusted, bool tls,
                         const std::vector<std::pair<std::string_view, std::string_view>>& fields,
                         const ProxyTrust& trust) {
  ClientView view{.ip = {}, .https = tls, .host = {}, .forwarded = false};
  IpAddress client = peer;
  if (peer_trusted) {
    std::vector<std::string_view> xff, xproto, xhost, forwarded;
    for (const auto& [name, value] : fields) {
      if (IEquals(name, "X-Forwarded-For"))
        AppendListMembers(value, xff);
      else if (IEquals(name, "X-Forwarded-Proto"))
        AppendListMembers(value, xproto);
      else if (IEquals(name, "X-Forwarded-Host"))
        AppendListMembers(value, xhost);
      else if (IEquals(name, "Forwarded"))
        forwarded.push_back(value);
    }
    if (!xff.empty() || !xproto.empty() || !xhost.empty()) {
      // X-Forwarded-*: the client from the right of X-Forwarded-For; proto and host as the
      // nearest proxy set them (the right-most value).
      for (auto it = xff.rbegin(); it != xff.rend(); ++it) {
        auto node = ParseNode(*it);
        if (!node) break;
        client = *node;
        view.forwarded = true;
        if (!trust.Trusts(*node)) break;
      }
      if (!xproto.empty()) {
        if (auto https = ForwardedProto(xproto.back())) {
          view.https = *https;
          view.forwarded = true;
        }
      }
      if (!xhost.empty()) {
        view.host = ForwardedHost(xhost.back());
        if (!view.host.empty()) view.forwarded = true;
      }
    } else if (!forwarded.empty()) {
      if (auto elements = ParseForwarded(forwarded)) {
        // Each element was appended by the proxy to its right (the last by the peer), all
        // of them trusted so far; proto and host come from the last element reached.
        const ForwardedElement* reached = nullptr;
        for (auto it = elements->rbegin(); it != elements->rend(); ++it) {
          reached = &*it;
          auto node = ParseNode(it->for_node);
          if (!node) break;
          client = *node;
          view.forwarded = true;
          if (!trust.Trusts(*node)) break;
        }
        if (reached) {
          if (auto https = ForwardedProto(reached->proto)) {
            view.https = *https;
            view.forwarded = true;
          }
          view.host = ForwardedHost(reached->host);
          if (!view.host.empty()) view.forwarded = true;
        }
      }
    }
  }
  view.ip = IpToString(client);
  return view;
}

}  // namespace crmd::http

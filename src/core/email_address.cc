#include "src/core/email_address.h"

#include <cctype>
#include <cstdint>

namespace crmd {
namespace {

constexpr size_t kMaxLocal = 64;    // RFC 5321 §4.5.3.1.1
constexpr size_t kMaxDomain = 253;  // RFC 1035 (255 octets on the wire)
constexpr size_t kMaxLabel = 63;
constexpr size_t kMaxAddress = 254;  // RFC 5321 path limit minus the angle brackets

bool IsAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// atext of RFC 5322 §3.2.3.
bool IsAtext(unsigned char c) {
  if (std::isalnum(c)) return true;
  return std::string_view("!#$%&'*+/=?^_`{|}~-").find(static_cast<char>(c)) !=
         std::string_view::npos;
}

// Decodes UTF-8; false on malformed input (overlongs, surrogates, > U+10FFFF).
bool DecodeUtf8(std::string_view s, std::u32string* out) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    size_t n;
    if (c < 0x80) {
      cp = c;
      n = 1;
    } else if ((c & 0xE0) == 0xC0) {
      cp = c & 0x1F;
      n = 2;
    } else if ((c & 0xF0) == 0xE0) {
      cp = c & 0x0F;
      n = 3;
    } else if ((c & 0xF8) == 0xF0) {
      cp = c & 0x07;
      n = 4;
    } else
      return false;
    if (i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    out->push_back(cp);
    i += n;
  }
  return true;
}

// A small case map for common scripts (Latin-1, Greek, Cyrillic); full UTS #46 mapping
// is out of scope (docs/crm.md).
char32_t LowerCodePoint(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 0x20;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  return c;
}

// RFC 3492 §6.3 encoding.
void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string PunycodeEncode(const std::u32string& input) {
  constexpr uint32_t kBase = 36, kTmin = 1, kTmax = 26, kSkew = 38, kDamp = 700;
  auto adapt = [](uint32_t delta, uint32_t numpoints, bool first) {
    delta = first ? delta / kDamp : delta / 2;
    delta += delta / numpoints;
    uint32_t k = 0;
    while (delta > ((kBase - kTmin) * kTmax) / 2) {
      delta /= kBase - kTmin;
      k += kBase;
    }
    return k + (kBase - kTmin + 1) * delta / (delta + kSkew);
  };
  auto digit = [](uint32_t d) { return static_cast<char>(d < 26 ? 'a' + d : '0' + (d - 26)); };
  std::string out;
  for (char32_t c : input)
    if (c < 0x80) out.push_back(static_cast<char>(c));
  uint32_t b = static_cast<uint32_t>(out.size()), h = b;
  if (b > 0) out.push_back('-');
  uint32_t n = 0x80, delta = 0, bias = 72;
  while (h < input.size()) {
    uint32_t m = UINT32_MAX;
    for (char32_t c : input)
      if (c >= n && c < m) m = c;
    delta += (m - n) * (h + 1);
    n = m;
    for (char32_t c : input) {
      if (c < n) ++delta;
      if (c != n) continue;
      uint32_t q = delta;
      for (uint32_t k = kBase;; k += kBase) {
        uint32_t t = k <= bias ? kTmin : (k >= bias + kTmax ? kTmax : k - bias);
        if (q < t) break;
        out.push_back(digit(t + (q - t) % (kBase - t)));
        q = (q - t) / (kBase - t);
      }
      out.push_back(digit(q));
      bias = adapt(delta, h + 1, h == b);
      delta = 0;
      ++h;
    }
    ++delta;
    ++n;
  }
  return out;
}

// Checks the local part; answers the normalised form or a reason word.
Result<std::string> CheckLocal(std::string_view local) {
  if (local.empty()) return Fail(Errc::kInvalidArgument, "syntax:local_empty");
  if (local.size() > kMaxLocal) return Fail(Errc::kInvalidArgument, "syntax:local_too_long");
  if (local.front() == '"') {
    // quoted-string (RFC 5322 §3.2.4): qtext or quoted-pair; kept as written.
    if (local.size() < 2 || local.back() != '"')
      return Fail(Errc::kInvalidArgument, "syntax:bad_quoted_local");
    for (size_t i = 1; i + 1 < local.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(local[i]);
      if (c == '\\') {
        if (i + 2 >= local.size()) return Fail(Errc::kInvalidArgument, "syntax:bad_quoted_local");
        unsigned char n = static_cast<unsigned char>(local[++i]);
        if (n < 32 || n > 126) return Fail(Errc::kInvalidArgument, "syntax:bad_quoted_local");
        continue;
      }
      if (c == '"' || c < 32 || c == 127)
        return Fail(Errc::kInvalidArgument, "syntax:bad_quoted_local");
    }
    return std::string(local);
  }
  if (local.front() == '.' || local.back() == '.' || local.find("..") != std::string_view::npos)
    return Fail(Errc::kInvalidArgument, "syntax:local_dots");
  std::u32string cps;
  if (!DecodeUtf8(local, &cps)) return Fail(Errc::kInvalidArgument, "syntax:bad_utf8");
  for (char32_t c : cps) {
    if (c == '.') continue;
    if (c >= 0x80) {  // RFC 6531 UTF8-non-ascii; control characters stay refused
      if (c < 0xA0) return Fail(Errc::kInvalidArgument, "syntax:local_bad_character");
      continue;
    }
    if (!IsAtext(static_cast<unsigned char>(c)))
      return Fail(Errc::kInvalidArgument, "syntax:local_bad_character");
  }
  // Lower-case with the same mapping as domains, so that ZOË@ and zoë@ are one contact.
  std::string out;
  out.reserve(local.size());
  for (char32_t c : cps) AppendUtf8(LowerCodePoint(c), &out);
  return out;
}

}  // namespace

Result<std::string> DomainToAscii(std::string_view domain) {
  if (!domain.empty() && domain.back() == '.') domain.remove_suffix(1);  // root dot
  if (domain.empty()) return Fail(Errc::kInvalidArgument, "syntax:domain_empty");
  if (domain.front() == '[') return Fail(Errc::kInvalidArgument, "syntax:domain_literal");
  std::string out;
  size_t labels = 0;
  std::string last_label;
  size_t start = 0;
  while (start <= domain.size()) {
    size_t dot = domain.find('.', start);
    if (dot == std::string_view::npos) dot = domain.size();
    std::string_view raw = domain.substr(start, dot - start);
    if (raw.empty()) return Fail(Errc::kInvalidArgument, "syntax:domain_empty_label");
    std::u32string cps;
    if (!DecodeUtf8(raw, &cps)) return Fail(Errc::kInvalidArgument, "syntax:bad_utf8");
    bool ascii = true;
    for (auto& c : cps) {
      c = LowerCodePoint(c);
      if (c >= 0x80) ascii = false;
    }
    std::string label;
    if (ascii) {
      for (char32_t c : cps) label.push_back(static_cast<char>(c));
    } else {
      for (char32_t c : cps)
        if (c < 0x80 && !(std::isalnum(static_cast<int>(c)) || c == '-'))
          return Fail(Errc::kInvalidArgument, "syntax:domain_bad_character");
      label = "xn--" + PunycodeEncode(cps);
    }
    if (label.size() > kMaxLabel) return Fail(Errc::kInvalidArgument, "syntax:label_too_long");
    for (char c : label)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-'))
        return Fail(Errc::kInvalidArgument, "syntax:domain_bad_character");
    if (label.front() == '-' || label.back() == '-')
      return Fail(Errc::kInvalidArgument, "syntax:label_hyphen");
    if (!out.empty()) out.push_back('.');
    out += label;
    last_label = label;
    ++labels;
    start = dot + 1;
    if (dot == domain.size()) break;
  }
  if (out.size() > kMaxDomain) return Fail(Errc::kInvalidArgument, "syntax:domain_too_long");
  if (labels < 2) return Fail(Errc::kInvalidArgument, "syntax:domain_needs_dot");
  if (std::all_of(last_label.begin(), last_label.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return Fail(Errc::kInvalidArgument, "syntax:numeric_tld");
  return out;
}

Result<std::string> NormalizeEmail(std::string_view raw) {
  while (!raw.empty() && IsAsciiSpace(raw.front())) raw.remove_prefix(1);
  while (!raw.empty() && IsAsciiSpace(raw.back())) raw.remove_suffix(1);
  if (raw.empty()) return Fail(Errc::kInvalidArgument, "syntax:empty");
  size_t at = raw.rfind('@');  // quoted local parts may contain '@'
  if (at == std::string_view::npos) return Fail(Errc::kInvalidArgument, "syntax:missing_at");
  auto local = CheckLocal(raw.substr(0, at));
  if (!local) return Fail(local.error());
  auto domain = DomainToAscii(raw.substr(at + 1));
  if (!domain) return Fail(domain.error());
  std::string out = *local + "@" + *domain;
  if (out.size() > kMaxAddress) return Fail(Errc::kInvalidArgument, "syntax:address_too_long");
  return out;
}

}  // namespace crmd

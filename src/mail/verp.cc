#include "src/mail/verp.h"

#include <charconv>

#include "src/core/crypto.h"
#include "src/core/text.h"

namespace crmd::mail {
namespace {

constexpr std::string_view kPrefix = "bounce+";
constexpr size_t kMacBytes = 10;  // 16 base32 characters, 80 bits

std::string Base32Lower(std::string_view bytes) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char b : bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out.push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (5 - bits)) & 31]);
  return out;
}

std::optional<int64_t> Number(std::string_view s) {
  int64_t v = 0;
  if (s.empty() || s.size() > 18) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

bool KnownKind(char k) { return k == 'c' || k == 's' || k == 'a' || k == 'o'; }

}  // namespace

std::string VerpAddresses::Mac(std::string_view body) const {
  std::string mac = crypto::HmacSha256(secret_, "verp1:" + std::string(body));
  return Base32Lower(std::string_view(mac).substr(0, kMacBytes));
}

std::string VerpAddresses::ReturnPath(const VerpRef& ref) const {
  std::string body = std::string(1, ref.kind) + std::to_string(ref.owner_id) + "-" +
                     std::to_string(ref.contact_id);
  return std::string(kPrefix) + body + "-" + Mac(body) + "@" + domain_;
}

std::optional<VerpRef> VerpAddresses::Parse(std::string_view address) const {
  std::string a = text::AsciiLower(address);
  if (!a.empty() && a.front() == '<' && a.back() == '>') a = a.substr(1, a.size() - 2);
  auto at = a.rfind('@');
  if (at == std::string::npos || a.substr(at + 1) != text::AsciiLower(domain_)) return std::nullopt;
  std::string_view local = std::string_view(a).substr(0, at);
  if (local.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  local.remove_prefix(kPrefix.size());
  auto last = local.rfind('-');
  if (last == std::string_view::npos) return std::nullopt;
  std::string_view body = local.substr(0, last), mac = local.substr(last + 1);
  auto dash = body.find('-');
  if (body.size() < 4 || !KnownKind(body[0]) || dash == std::string_view::npos) return std::nullopt;
  auto owner = Number(body.substr(1, dash - 1));
  auto contact = Number(body.substr(dash + 1));
  if (!owner || !contact) return std::nullopt;
  if (!crypto::ConstantTimeEqual(mac, Mac(body))) return std::nullopt;
  return VerpRef{.kind = body[0], .owner_id = *owner, .contact_id = *contact};
}

}  // namespace crmd::mail

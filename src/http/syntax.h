// The character classes and list rules of HTTP's grammar (RFC 9110 §5.6), shared by the
// request checks (request_checks.cc) and the forwarding headers (forwarding.cc).
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "src/core/text.h"

namespace crmd::http::syntax {

constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool IsAlnum(char c) { return IsAlpha(c) || IsDigit(c); }
inline bool IsOws(char c) { return c == ' ' || c == '\t'; }

// RFC 9110 §5.6.2 tchar. A table: field names of every request go through it.
inline constexpr std::array<bool, 256> kTchar = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = IsAlnum(static_cast<char>(c));
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();
inline bool IsTchar(char c) { return kTchar[static_cast<unsigned char>(c)]; }

// A field value's bytes as ParsePlainHead accepts them: visible ASCII, SP and HTAB.
inline constexpr std::array<bool, 256> kPlainFieldByte = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c <= 0x7E; ++c) t[c] = true;
  t['\t'] = true;
  return t;
}();

using text::TrimOws;

// Appends the non-empty members of a comma-separated list (RFC 9110 §5.6.1: empty
// elements are ignored by recipients), each trimmed of optional whitespace.
inline void AppendListMembers(std::string_view value, std::vector<std::string_view>& out) {
  while (true) {
    size_t comma = value.find(',');
    auto member = TrimOws(value.substr(0, comma));
    if (!member.empty()) out.push_back(member);
    if (comma == std::string_view::npos) return;
    value.remove_prefix(comma + 1);
  }
}

}  // namespace crmd::http::syntax

// Small ASCII text helpers that several modules need (header-only, no locale: protocol
// names, hosts, header values and email domains are ASCII case-insensitive).
#pragma once

#include <string>
#include <string_view>

namespace crmd::text {

inline char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = AsciiLower(c);
  return out;
}

// Without the optional whitespace (space, tab) of HTTP (RFC 9110 §5.6.3) at either end.
inline std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Text for HTML: & < > " and ' as entities (' as &#39;), and with `escape_slash` also /
// as &#x2F; (the console's templates escape as mstch did).
inline std::string HtmlEscape(std::string_view text, bool escape_slash = false) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '/':
        if (escape_slash) {
          out += "&#x2F;";
          break;
        }
        [[fallthrough]];
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace crmd::text

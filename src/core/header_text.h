#pragma once
// Whether a value can go into a mail header field as it is (a sender's display name, a
// subject). Checked when the value is saved, so that a bad one is refused with a clear
// error at once instead of failing every message built with it later. Header-only, pure.
#include <string>
#include <string_view>

#include "src/core/utf8.h"

namespace crmd {

// Why `value` cannot go into a mail header: "" when it can. Refused: CR and LF (a header
// injection: RenderMessage refuses such a message), every other control character (C0,
// DEL and C1: no mail reader shows them), and bytes that are not UTF-8 (an RFC 2047
// encoded-word carries UTF-8).
inline std::string HeaderTextProblem(std::string_view value) {
  for (size_t i = 0; i < value.size();) {
    auto c = static_cast<unsigned char>(value[i]);
    if (c == '\r' || c == '\n') return "must not contain line breaks";
    if (c < 0x20 || c == 0x7f) return "must not contain control characters";
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = Utf8Sequence(value, i);
    if (n == 0) return "is not valid UTF-8";
    // U+0080..U+009F (C1 controls) are C2 80..C2 9F.
    if (n == 2 && c == 0xC2 && static_cast<unsigned char>(value[i + 1]) < 0xA0)
      return "must not contain control characters";
    i += n;
  }
  return "";
}

}  // namespace crmd

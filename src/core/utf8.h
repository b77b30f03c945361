#pragma once
// Well-formed UTF-8, as the JSON writer, the JSON parser and the quick schema check read
// it. Pure; header-only so that the writer's and the parser's loops inline it.
#include <cstddef>
#include <string_view>

namespace crmd {

// The length of the valid UTF-8 sequence starting at s[i] (a non-ASCII lead byte), or 0
// when it is not one (Unicode Table 3-7: no overlong forms, no surrogates, nothing above
// U+10FFFF; what nlohmann's decoder accepts).
inline size_t Utf8Sequence(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> unsigned {
    return k < s.size() ? static_cast<unsigned char>(s[k]) : 0x100;
  };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    unsigned b = at(k);
    return b >= lo && b <= hi;
  };
  unsigned b = at(i);
  if (b >= 0xC2 && b <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (b == 0xE0) return cont(i + 1, 0xA0, 0xBF) && cont(i + 2) ? 3 : 0;
  if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (b == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
  if (b == 0xF0) return cont(i + 1, 0x90, 0xBF) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (b >= 0xF1 && b <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (b == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}

}  // namespace crmd

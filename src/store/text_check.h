#pragma once
// Both engines store the same text. PostgreSQL's text type cannot hold the character
// U+0000 (libpq passes parameters as C strings, so it would cut the value short without a
// word), while SQLite would keep it; a value with one is refused on both, before the
// statement runs, so nothing is written short and `crmctl copy` never finds the two apart.
// The request parsers refuse it earlier with the field's name where they can (a JSON
// "\u0000"); this is the floor under every other way in (forms, the console, crmctl).
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "src/store/db.h"

namespace crmd::store {

inline Status RefuseNulInText(const std::vector<Value>& params) {
  for (const Value& v : params)
    if (const auto* s = std::get_if<std::string>(&v); s && std::memchr(s->data(), 0, s->size()))
      return Fail(Errc::kInvalidArgument,
                  "a text value contains the character U+0000 (NUL), which is not accepted");
  return Ok();
}

}  // namespace crmd::store

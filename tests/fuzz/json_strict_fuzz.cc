// The strict JSON parser every face reads bodies with (src/core/json_parse.h, crmd's
// own): depth limit, duplicate members, UTF-8. Whatever the input, it answers
// a value or a problem. Differential against nlohmann's parser: a value it accepts is the
// one nlohmann::json::parse makes, with the same types (an unsigned, a signed and a double
// 1 compare equal); what it calls a syntax problem nlohmann refuses too (but for a NUL
// byte, where nlohmann's input ends); and the value serialises and parses back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "src/core/json_parse.h"
#include "src/core/json_write.h"

namespace {
bool SameTypes(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i)
      if (!SameTypes(a[i], b[i])) return false;
  } else if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !SameTypes(*it, *other)) return false;
    }
  }
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = crmd::ParseJsonStrict(text);
  // What it accepts, nlohmann's own DOM parser reads to the same value.
  auto dom = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed && (dom.is_discarded() || dom != parsed.value || !SameTypes(dom, parsed.value)))
    std::abort();
  if (!parsed && parsed.problem == crmd::JsonProblem::kSyntax && !dom.is_discarded() &&
      text.find('\0') == std::string_view::npos)
    std::abort();
  if (!parsed) return 0;
  auto again = crmd::ParseJsonStrict(parsed.value.dump());
  if (!again || again.value != parsed.value) std::abort();
  // The fast writer every answer goes through writes what nlohmann's dump() writes.
  if (crmd::DumpJson(parsed.value) != parsed.value.dump()) std::abort();
  return 0;
}

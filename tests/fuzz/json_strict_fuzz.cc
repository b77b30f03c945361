// The strict JSON parser every face reads bodies with (src/core/json_parse.h): depth
// limit, duplicate members, UTF-8. Whatever the input, it answers a value or a problem;
// a value it accepts is the one nlohmann::json::parse makes, and serialises and parses
// back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "src/core/json_parse.h"
#include "src/core/json_write.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = crmd::ParseJsonStrict(text);
  // What it accepts, nlohmann's own DOM parser reads to the same value.
  auto dom = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed && (dom.is_discarded() || dom != parsed.value)) std::abort();
  if (!parsed) return 0;
  auto again = crmd::ParseJsonStrict(parsed.value.dump());
  if (!again || again.value != parsed.value) std::abort();
  // The fast writer every answer goes through writes what nlohmann's dump() writes.
  if (crmd::DumpJson(parsed.value) != parsed.value.dump()) std::abort();
  return 0;
}

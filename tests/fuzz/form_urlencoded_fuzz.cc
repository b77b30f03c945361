// Form submissions and query strings (application/x-www-form-urlencoded, src/core/
// http_types.h): any body parses to name/value pairs; percent-encoding what was decoded
// decodes back to it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/core/http_types.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto form = crmd::http::ParseForm(body);
  for (const auto& [name, value] : form) {
    auto back = crmd::http::PercentDecode(crmd::http::PercentEncode(value));
    if (!back || *back != value) std::abort();
    (void)crmd::http::FormValue(form, name);
  }
  return 0;
}

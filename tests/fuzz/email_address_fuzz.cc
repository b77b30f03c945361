// Email address parsing and normalisation (src/crm/email_validation.h, syntax only): an
// address is refused with a reason or normalised, and a normalised address normalises to
// itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "src/crm/email_validation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  auto normalized = crmd::NormalizeEmail(raw);
  if (!normalized) return 0;
  auto again = crmd::NormalizeEmail(*normalized);
  if (!again || *again != *normalized) std::abort();
  return 0;
}

// Incoming-webhook mappings (src/webhooks/incoming_mapping.h) and the dotted-path reader
// (json_path.h): the input is a JSON document {"mapping":..., "applies":..., "payload":...}
// or a bare path; configuring refuses or accepts, and mapping a payload answers a
// contact input or the list of what is wrong, never a crash.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "src/core/json_parse.h"
#include "src/webhooks/incoming_mapping.h"
#include "src/webhooks/json_path.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)crmd::webhooks::JsonPath::Parse(text);
  auto doc = crmd::ParseJsonStrict(text);
  if (!doc || !doc.value.is_object()) return 0;
  const auto& j = doc.value;
  static const nlohmann::json kDefaultMapping = {{"email", "email"}};
  auto mapping =
      crmd::webhooks::ParseMapping(j.contains("mapping") ? j["mapping"] : kDefaultMapping);
  auto applies =
      crmd::webhooks::ParseApplies(j.contains("applies") ? j["applies"] : nlohmann::json::object());
  if (!mapping || !applies) return 0;
  (void)crmd::webhooks::MapPayload(*mapping, *applies, j.contains("payload") ? j["payload"] : j);
  return 0;
}

// JSON Schema argument validation (src/mcp/json_schema.h, valijson) against the real
// input schemas of the 48 tools: the first byte picks the tool, the rest is the arguments
// document. Validation answers a violation or nothing, whatever the document; and where
// the quick checker (src/mcp/quick_schema.h) gives a verdict, valijson gives the same.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "src/core/embedded.h"
#include "src/core/json_parse.h"
#include "src/mcp/json_schema.h"

namespace {

std::vector<std::unique_ptr<crmd::mcp::CompiledSchema>> Schemas() {
  std::vector<std::unique_ptr<crmd::mcp::CompiledSchema>> out;
  for (const auto& f : crmd::embedded::All()) {
    if (f.path.rfind("tools/", 0) != 0 || f.path.substr(f.path.size() - 5) != ".json") continue;
    auto descriptor = nlohmann::json::parse(f.data, nullptr, false);
    if (!descriptor.is_object() || !descriptor.contains("inputSchema")) continue;
    auto compiled = crmd::mcp::CompiledSchema::Compile(descriptor["inputSchema"]);
    if (compiled) out.push_back(std::move(*compiled));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto schemas = Schemas();
  if (size == 0 || schemas.empty()) return 0;
  const auto& schema = *schemas[data[0] % schemas.size()];
  auto doc =
      crmd::ParseJsonStrict(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  if (!doc) return 0;
  const auto violation = schema.Validate(doc.value);
  const auto quick = schema.QuickCheck(doc.value);
  if (quick != crmd::mcp::QuickVerdict::kUnsure) {
    const bool valijson_valid = !schema.ValidateWithValijson(doc.value).has_value();
    if ((quick == crmd::mcp::QuickVerdict::kValid) != valijson_valid) std::abort();
    if (valijson_valid == violation.has_value()) std::abort();
  }
  return 0;
}

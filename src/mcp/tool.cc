#include "src/mcp/tool.h"

namespace crmd::mcp {

using nlohmann::json;

bool ToolContext::SupportsElicitation(std::string_view mode) const {
  if (!client_capabilities || !client_capabilities->is_object()) return false;
  auto e = client_capabilities->find("elicitation");
  if (e == client_capabilities->end() || !e->is_object()) return false;
  // Backwards compatibility: an empty elicitation object declares form mode only.
  if (e->empty()) return mode == "form";
  auto m = e->find(std::string(mode));
  return m != e->end() && m->is_object();
}

json ElicitForm(std::string message, json requested_schema) {
  return json{{"method", "elicitation/create"},
              {"params",
               {{"mode", "form"},
                {"message", std::move(message)},
                {"requestedSchema", std::move(requested_schema)}}}};
}

json ElicitUrl(std::string message, std::string url) {
  return json{
      {"method", "elicitation/create"},
      {"params", {{"mode", "url"}, {"message", std::move(message)}, {"url", std::move(url)}}}};
}

}  // namespace crmd::mcp

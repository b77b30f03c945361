#include "tools/tags.h"

#include "tools/lists.h"

namespace crmd::tools {

Status RegisterTagTools(mcp::ToolRegistry& registry, crm::Services& services) {
  return RegisterGroupTools(registry, services, *services.tags);
}

}  // namespace crmd::tools

#include "tools/tags.h"

#include "tools/lists.h"

namespace crmd::tools {

Status RegisterTagTools(mcp::ToolRegistry& registry, marketing::Services& services) {
  return RegisterGroupTools(registry, services, *services.crm.tags);
}

}  // namespace crmd::tools

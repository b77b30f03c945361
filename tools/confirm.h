#pragma once
// confirm_action: performs an action previewed by a tool marked C in TOOLS.md.
#include "src/core/result.h"
#include "src/crm/services.h"
#include "src/mcp/registry.h"

namespace crmd::tools {

Status RegisterConfirmTools(mcp::ToolRegistry& registry, crm::Services& services);

}  // namespace crmd::tools

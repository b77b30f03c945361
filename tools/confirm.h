#pragma once
// confirm_action: performs an action previewed by a tool marked C in TOOLS.md.
#include "src/core/result.h"
#include "src/marketing/services.h"
#include "src/mcp/registry.h"

namespace crmd::tools {

Status RegisterConfirmTools(mcp::ToolRegistry& registry, marketing::Services& services);

}  // namespace crmd::tools

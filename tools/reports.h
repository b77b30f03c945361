#pragma once
// The reports tools (TOOLS.md). Registered by the composition root; handlers are thin and
// call the crm services. Thread-safe once registered.
#include "src/core/result.h"
#include "src/marketing/services.h"
#include "src/mcp/registry.h"

namespace crmd::tools {

Status RegisterReportTools(mcp::ToolRegistry& registry, marketing::Services& services);

}  // namespace crmd::tools

#pragma once
// get_settings, update_settings.
#include "src/core/result.h"
#include "src/marketing/services.h"
#include "src/mcp/registry.h"

namespace crmd::tools {

Status RegisterSettingsTools(mcp::ToolRegistry& registry, marketing::Services& services);

}  // namespace crmd::tools

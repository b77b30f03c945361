#pragma once
// list_tags, get_tag, create_tag, update_tag, delete_tag.
#include "src/core/result.h"
#include "src/marketing/services.h"
#include "src/mcp/registry.h"

namespace crmd::tools {

Status RegisterTagTools(mcp::ToolRegistry& registry, marketing::Services& services);

}  // namespace crmd::tools

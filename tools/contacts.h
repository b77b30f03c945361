#pragma once
// The 12 contact tools of TOOLS.md (list_contacts ... validate_email). Handlers are thin:
// they read arguments, call crm::ContactService and shape the result.
#include "src/core/result.h"
#include "src/marketing/services.h"
#include "src/mcp/registry.h"

namespace crmd::tools {

Status RegisterContactTools(mcp::ToolRegistry& registry, marketing::Services& services);

}  // namespace crmd::tools

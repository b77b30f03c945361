#pragma once
// list_lists, get_list, create_list, update_list, delete_list. The tag tools (tags.h)
// share the implementation through RegisterGroupTools.
#include "src/core/result.h"
#include "src/marketing/services.h"
#include "src/mcp/registry.h"

namespace crmd::tools {

Status RegisterListTools(mcp::ToolRegistry& registry, marketing::Services& services);
// Registers list_<plural>, get_<noun>, create_<noun>, update_<noun>, delete_<noun>.
Status RegisterGroupTools(mcp::ToolRegistry& registry, marketing::Services& services,
                          crm::GroupService& groups);

}  // namespace crmd::tools

#pragma once
// crmd's MCP Apps views (docs/mcp.md "Views"): ui://crmd/confirm, ui://crmd/dashboard and
// ui://crmd/contact, HTML with inline script and style written for crmd (tools/views/,
// embedded at build time), and which tools point at them. The endpoint offers them only to
// clients that declare the extension (src/mcp/apps.h).
#include <string>
#include <string_view>

#include "src/core/result.h"
#include "src/mcp/apps.h"

namespace crmd::tools {

// Adds the three views and links the tools to them. Fails when a view is missing from the
// embedded files or is 60 KB or more.
Status RegisterViews(mcp::UiResources& views);

// The whole document of a view (its script and style inlined, its CSP meta tag filled), or
// empty when `name` (e.g. "confirm") is not a view.
std::string ViewDocument(std::string_view name);

}  // namespace crmd::tools

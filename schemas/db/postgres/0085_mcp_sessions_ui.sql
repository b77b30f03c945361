-- MCP 2025-era sessions remember whether the client declared MCP Apps at initialize
-- (capabilities.extensions["io.modelcontextprotocol/ui"]): such a session lists the views
-- (resources/list, resources/read) and sees _meta.ui.resourceUri on tools, on any node.
ALTER TABLE mcp_sessions ADD COLUMN ui_extension BIGINT NOT NULL DEFAULT 0;

-- MCP 2025-era sessions remember whether the client declared URL-mode elicitation at
-- initialize (capabilities.elicitation.url): a confirmation that needs the person then
-- answers URLElicitationRequiredError (-32042) with the approval page, on any node.
ALTER TABLE mcp_sessions ADD COLUMN url_elicitation BIGINT NOT NULL DEFAULT 0;

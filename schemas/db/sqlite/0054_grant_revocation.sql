-- Access tokens carry their grant (claim gid) and the bearer check refuses the tokens of a
-- revoked grant, so a client_credentials token needs no record of its own, and a repeated
-- client_credentials request joins the client's live grant of the same scope instead of
-- adding a grant per token (issue 12; docs/oauth-tokens.md).
CREATE INDEX grants_revoked ON grants(revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX grants_client_live ON grants(client_id, scope) WHERE revoked_at IS NULL AND user_id IS NULL;

-- W3C Trace Context for campaign sends and automation and sequence steps (docs/operations.md
-- "Traces"): the traceparent of the request that caused the work — the activation (or
-- resend) of a campaign, the change whose outbox event enrolled a contact in an automation
-- or a sequence, the activation that enrolled matching contacts — so that each message and
-- step is a child span of it in the log. NULL for rows written before this migration or
-- outside a request (crmctl, a trigger without a trace).
ALTER TABLE campaigns ADD COLUMN traceparent TEXT;
ALTER TABLE campaigns ADD COLUMN tracestate TEXT;
ALTER TABLE automation_runs ADD COLUMN traceparent TEXT;
ALTER TABLE automation_runs ADD COLUMN tracestate TEXT;
ALTER TABLE sequence_runs ADD COLUMN traceparent TEXT;
ALTER TABLE sequence_runs ADD COLUMN tracestate TEXT;

-- W3C Trace Context (docs/operations.md "Traces"): the traceparent of the request that
-- appended an event (its trace id and crmd's span), and of the webhook delivery made for
-- it, so that the delivery's log lines and its outgoing `traceparent` header continue the
-- request's trace. NULL for rows written before this migration or outside a request.
ALTER TABLE outbox_events ADD COLUMN traceparent TEXT;
ALTER TABLE outbox_events ADD COLUMN tracestate TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN traceparent TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN tracestate TEXT;

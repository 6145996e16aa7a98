-- out_group keeps servers that share one database without being replicas
-- of one installation apart (test servers, each with its own provider
-- endpoints): a server's worker sends only the messages its group queued.
-- One installation's replicas share a group ('' by default).
ALTER TABLE messaging_outbox ADD COLUMN out_group TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS ix_messaging_outbox_group_due ON messaging_outbox (out_group, next_attempt_at);

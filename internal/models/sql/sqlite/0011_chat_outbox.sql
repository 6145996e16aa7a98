-- Channel messages accepted by POST /api/connect/message and incoming
-- webhooks, waiting to be posted to ejabberd (package chat, Queue). A row
-- is written before the request is answered and deleted, in one
-- transaction with its chat.message event (event: the event's JSON data),
-- once ejabberd took the stanza; the rendered stanza keeps its id, so a
-- retry posts the same message. Rows of one room go out in id order: a
-- room whose oldest row waits for a retry (next_attempt_at in the future)
-- holds back its later rows. out_group keeps test servers sharing one
-- database apart (the outbox group).

CREATE TABLE IF NOT EXISTS chat_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  out_group TEXT NOT NULL DEFAULT '',
  room TEXT NOT NULL,
  stanza_id TEXT NOT NULL,
  stanza TEXT NOT NULL,
  tenant TEXT NOT NULL DEFAULT '',
  channel TEXT NOT NULL DEFAULT '',
  event TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  last_error TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS ix_chat_outbox_room ON chat_outbox (out_group, room, id);
CREATE INDEX IF NOT EXISTS ix_chat_outbox_due ON chat_outbox (out_group, next_attempt_at);

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
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  out_group VARCHAR(64) NOT NULL DEFAULT '',
  room VARCHAR(191) NOT NULL,
  stanza_id VARCHAR(64) NOT NULL,
  stanza MEDIUMTEXT NOT NULL,
  tenant VARCHAR(64) NOT NULL DEFAULT '',
  channel VARCHAR(64) NOT NULL DEFAULT '',
  event MEDIUMTEXT NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  next_attempt_at VARCHAR(32) NOT NULL,
  last_error VARCHAR(512) NOT NULL DEFAULT '',
  created_at VARCHAR(32) NOT NULL,
  KEY ix_chat_outbox_room (out_group, room, id),
  KEY ix_chat_outbox_due (out_group, next_attempt_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

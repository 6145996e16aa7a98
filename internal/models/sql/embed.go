// Package sql embeds Switchboard's schema migrations: one numbered file per
// step and dialect (mysql/NNNN_name.sql, sqlite/NNNN_name.sql), applied in
// order at start and by `switchboard migrate`.
package sql

import "embed"

// Files holds the migration files of both dialects.
//
//go:embed mysql/*.sql sqlite/*.sql
var Files embed.FS

package models

import (
	"context"
	"fmt"

	"github.com/switchboard/switchboard/internal/platform/keyprefix"
)

// InstallationID is the id every replica on this database shares (table
// installation, written once by its migration). What replicas tell each
// other through Redis is namespaced by it, so installations that share a
// Redis server never hear each other.
func (s *Store) InstallationID(ctx context.Context) (string, error) {
	var id string
	if err := s.db.GetContext(ctx, &id, "SELECT installation_id FROM installation WHERE id = 1"); err != nil {
		return "", fmt.Errorf("installation id: %w", s.dialect.translate(err))
	}
	return id, nil
}

// KeyPrefix starts every Redis key and channel of the installation on
// this database: "sb:<installation id>:". Installations sharing a Redis
// server (a Redis Cluster has one database) then never read, count or
// lock each other's state, even where their database ids coincide.
func (s *Store) KeyPrefix(ctx context.Context) (string, error) {
	id, err := s.InstallationID(ctx)
	if err != nil {
		return "", err
	}
	return keyprefix.For(id), nil
}

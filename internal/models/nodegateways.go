package models

import (
	"context"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
)

// GatewayLedger keeps, per FreeSWITCH node, the fingerprints of the sofia
// gateways it was last given (the node_gateways table); it is the ledger
// of package gateways' resync (gateways.Ledger).
type GatewayLedger struct{ st *Store }

// GatewayLedger returns the store's gateway ledger.
func (s *Store) GatewayLedger() GatewayLedger { return GatewayLedger{st: s} }

// Given returns the fingerprints recorded for node, by gateway name.
func (l GatewayLedger) Given(ctx context.Context, node string) (map[string]string, error) {
	var rows []struct {
		Gateway     string `db:"gateway"`
		Fingerprint string `db:"fingerprint"`
	}
	if err := l.st.db.SelectContext(ctx, &rows, "SELECT gateway, fingerprint FROM node_gateways WHERE node = ?", node); err != nil {
		return nil, fmt.Errorf("node_gateways: %w", l.st.dialect.translate(err))
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Gateway] = r.Fingerprint
	}
	return out, nil
}

// SetGiven replaces node's fingerprints with gws, in one transaction.
func (l GatewayLedger) SetGiven(ctx context.Context, node string, gws map[string]string) error {
	err := l.st.inTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM node_gateways WHERE node = ?", node); err != nil {
			return l.st.dialect.translate(err)
		}
		names := make([]string, 0, len(gws))
		for name := range gws {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if _, err := tx.ExecContext(ctx, "INSERT INTO node_gateways (node, gateway, fingerprint) VALUES (?, ?, ?)", node, name, gws[name]); err != nil {
				return l.st.dialect.translate(err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("node_gateways: %w", err)
	}
	return nil
}

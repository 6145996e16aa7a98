package models_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestKeyAndAdminWritesRecordChanges: creating and revoking an API key and
// resetting an administrator's password leave change events, carrying the
// key's tenant and never the key, its hash or the password.
func TestKeyAndAdminWritesRecordChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		o := newTenant(t, st)
		head, err := st.OutboxHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		key, err := st.CreateKey(ctx, map[string]any{"name": "crm", "tenant": o.Tenant}, "test")
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprint(key["id"])
		if err := st.RevokeKey(ctx, id, ""); err != nil {
			t.Fatal(err)
		}
		admin := storetest.Name("adm")
		if _, err := st.SetAdmin(ctx, admin, "first password 123"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SetAdmin(ctx, admin, "second password 456"); err != nil {
			t.Fatal(err)
		}
		// Every change since head: tests of other packages write to the
		// same MariaDB database meanwhile, so more than one page may lie
		// between this test's own changes.
		var chs []changes.Change
		for after := head; ; {
			page, err := st.OutboxAfter(ctx, after, 500)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			chs = append(chs, page...)
			after = page[len(page)-1].ID
		}
		var got []string
		for _, c := range chs {
			if (c.Resource == "key" && c.Key == id) || c.Resource == "administrators" && strings.Contains(string(c.After), admin) {
				got = append(got, fmt.Sprintf("%s %s %s", c.Op, c.Resource, c.Tenant))
				for _, secret := range []string{key["key"].(string), models.HashKey(key["key"].(string)), "password 123", "password 456", `"password"`, "$2a$"} {
					if strings.Contains(string(c.Before)+string(c.After), secret) {
						t.Fatalf("change %d carries a secret (%q): %s %s", c.ID, secret, c.Before, c.After)
					}
				}
				if c.Op == changes.Update && c.Resource == "key" && !strings.Contains(string(c.After), `"revoked_at":"`) {
					t.Fatalf("revocation change without revoked_at: %s", c.After)
				}
			}
		}
		want := []string{"create key " + o.Tenant, "update key " + o.Tenant, "create administrators ", "update administrators "}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("changes %q, want %q", got, want)
		}
	})
}

// Issue 28: what changed after an outbox position, by scope, for the XML
// models a restarted replica restores; not told (complete false) when the
// changes after it were pruned or the outbox is behind it.
func TestOutboxScopesAfter(t *testing.T) {
	st := storetest.Open(t, storetest.SQLite(t)) // rows are deleted: a database of its own
	ctx := t.Context()
	head, err := st.OutboxHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o := newTenant(t, st)
	scopes, complete, err := st.OutboxScopesAfter(ctx, head)
	if err != nil || !complete || !scopes[strings.ToLower(o.Tenant)] {
		t.Fatalf("after a tenant was created: scopes %v complete %v err %v", scopes, complete, err)
	}
	now, err := st.OutboxHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if scopes, complete, err := st.OutboxScopesAfter(ctx, now); err != nil || !complete || len(scopes) != 0 {
		t.Fatalf("at the head: scopes %v complete %v err %v", scopes, complete, err)
	}
	if _, complete, err := st.OutboxScopesAfter(ctx, now+10); err != nil || complete {
		t.Fatalf("past the head (another database): complete %v err %v", complete, err)
	}
	if _, err := st.Querier().ExecContext(ctx, "DELETE FROM outbox WHERE id = ?", head+1); err != nil {
		t.Fatal(err)
	}
	if _, complete, err := st.OutboxScopesAfter(ctx, head); err != nil || complete {
		t.Fatalf("the first change after the position pruned: complete %v err %v", complete, err)
	}
}

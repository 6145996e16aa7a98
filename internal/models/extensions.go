package models

import (
	"context"
	"fmt"
	"strings"
)

// extensionHooks fill the default caller id and expose the SIP auth id.
type extensionHooks struct{}

var (
	_ beforeSaver   = extensionHooks{}
	_ beforeDeleter = extensionHooks{}
	_ outputter     = extensionHooks{}
)

func (extensionHooks) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	if err := checkTimezone("timezone", patch["timezone"]); err != nil {
		return err
	}
	if newName, ok := patch["name"]; ok && old != nil && newName != old["name"] {
		// The old number may be given to someone else: its keys end here.
		if err := ts.revokeExtensionKeys(ctx, o, str(old["name"])); err != nil {
			return err
		}
	}
	if old == nil && patch["callerid"] == nil {
		name := strings.TrimSpace(fmt.Sprintf("%s %s", str(patch["first_name"]), str(patch["last_name"])))
		if strings.ContainsAny(name, `"<>`) {
			name = ""
		}
		patch["callerid"] = fmt.Sprintf(`%s <%s>`, name, patch["name"])
		if name == "" {
			patch["callerid"] = fmt.Sprintf(`<%s>`, patch["name"])
		}
	}
	return nil
}

func (extensionHooks) output(o Owner, rec Record) {
	rec["sip_auth_id"] = fmt.Sprintf("%v-%s", rec["name"], o.Tenant)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// beforeDelete ends the extension's user keys with it, so a key never
// outlives its extension or acts as a later extension of the same number;
// its chat account goes too (the chat sync then removes it from ejabberd).
func (extensionHooks) beforeDelete(ctx context.Context, ts *txStore, o Owner, old Record) error {
	name := str(old["name"])
	if _, err := ts.tx.ExecContext(ctx, "DELETE FROM chat_accounts WHERE tenant_id = ? AND extension = ?", o.TenantID, name); err != nil {
		return fmt.Errorf("delete chat account of extension %s: %w", name, ts.dialect.translate(err))
	}
	return ts.revokeExtensionKeys(ctx, o, name)
}

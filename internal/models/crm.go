package models

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// crmHooks is the write behaviour CRM objects share: their own rules, their
// custom values checked against the tenant's custom field definitions
// (resources.md §4.5) and, for contacts, the phone index.
type crmHooks struct {
	rules
	// entity is the custom_fields entity whose definitions custom obeys.
	entity string
	// phones keeps contact_phones, the E.164 index of a contact's numbers.
	phones bool
}

var (
	_ beforeSaver   = crmHooks{}
	_ afterCreator  = crmHooks{}
	_ beforeDeleter = crmHooks{}
)

func (h crmHooks) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	if err := h.rules.beforeSave(ctx, ts, o, old, patch); err != nil {
		return err
	}
	if h.entity != "" {
		if err := ts.checkCustom(ctx, o, h.entity, old, patch); err != nil {
			return err
		}
	}
	if _, changed := patch["phones"]; h.phones && old != nil && changed {
		return ts.indexPhones(ctx, o, old["id"], patch["phones"])
	}
	return nil
}

func (h crmHooks) afterCreate(ctx context.Context, ts *txStore, o Owner, rec Record) error {
	if !h.phones {
		return nil
	}
	return ts.indexPhones(ctx, o, rec["id"], rec["phones"])
}

func (h crmHooks) beforeDelete(ctx context.Context, ts *txStore, _ Owner, old Record) error {
	if !h.phones {
		return nil
	}
	if _, err := ts.tx.ExecContext(ctx, "DELETE FROM contact_phones WHERE contact_id = ?", old["id"]); err != nil {
		return fmt.Errorf("contact phone index: %w", ts.dialect.translate(err))
	}
	return nil
}

// indexPhones replaces the contact's rows in contact_phones with its
// numbers (E.164 already: writes normalise phone fields).
func (ts *txStore) indexPhones(ctx context.Context, o Owner, id, phones any) error {
	if _, err := ts.tx.ExecContext(ctx, "DELETE FROM contact_phones WHERE contact_id = ?", id); err != nil {
		return fmt.Errorf("contact phone index: %w", ts.dialect.translate(err))
	}
	items, _ := phones.([]any)
	seen := map[string]bool{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		n, _ := m["number"].(string)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if _, err := ts.tx.ExecContext(ctx, "INSERT INTO contact_phones (tenant_id, number, contact_id) VALUES (?, ?, ?)", o.TenantID, n, id); err != nil {
			return fmt.Errorf("contact phone index: %w", ts.dialect.translate(err))
		}
	}
	return nil
}

// backfillContactPhones indexes the numbers of every existing contact
// (once, when the index is created).
func (ts *txStore) backfillContactPhones(ctx context.Context) error {
	s := ts.Store
	owners, err := s.ownersOf(ctx, ts, contactsResource)
	if err != nil {
		return err
	}
	for _, o := range owners {
		recs, err := s.queryRecords(ctx, ts.tx, contactsResource, "SELECT "+strings.Join(s.columns(contactsResource), ", ")+" FROM contacts WHERE tenant_id = ?", o.TenantID)
		if err != nil {
			return fmt.Errorf("backfill contact phones: %w", err)
		}
		for _, rec := range recs {
			if err := ts.indexPhones(ctx, o, rec["id"], rec["phones"]); err != nil {
				return err
			}
		}
	}
	return nil
}

// ContactName is a contact found by phone number.
type ContactName struct {
	ID        int64  `db:"id"`
	FirstName string `db:"first_name"`
	LastName  string `db:"last_name"`
	Company   string `db:"company_name"`
}

// DisplayName is how the contact is shown (caller id name, subjects):
// "First Last", else the company.
func (c ContactName) DisplayName() string {
	if n := strings.TrimSpace(c.FirstName + " " + c.LastName); n != "" {
		return n
	}
	return strings.TrimSpace(c.Company)
}

// ContactsByPhone returns the tenant's contacts with the E.164 number among
// their phones, oldest first: one lookup in the phone index.
func (s *Store) ContactsByPhone(ctx context.Context, tenantID int64, e164 string) ([]ContactName, error) {
	var rows []ContactName
	err := s.db.SelectContext(ctx, &rows, `SELECT c.id, COALESCE(c.first_name, '') AS first_name, COALESCE(c.last_name, '') AS last_name,
		COALESCE(c.company_name, '') AS company_name
		FROM contact_phones p JOIN contacts c ON c.id = p.contact_id AND c.tenant_id = p.tenant_id
		WHERE p.tenant_id = ? AND p.number = ? ORDER BY c.id`, tenantID, e164)
	if err != nil {
		return nil, fmt.Errorf("contacts by phone: %w", s.dialect.translate(err))
	}
	return rows, nil
}

// ContactNameByPhone is the display name of the named tenant's first
// contact (oldest) with the E.164 number among its phones, or "".
func (s *Store) ContactNameByPhone(ctx context.Context, tenant, e164 string) (string, error) {
	var rows []ContactName
	err := s.db.SelectContext(ctx, &rows, `SELECT c.id, COALESCE(c.first_name, '') AS first_name, COALESCE(c.last_name, '') AS last_name,
		COALESCE(c.company_name, '') AS company_name
		FROM contact_phones p JOIN contacts c ON c.id = p.contact_id AND c.tenant_id = p.tenant_id
		WHERE p.tenant_id = (SELECT id FROM tenants WHERE tenant = ?) AND p.number = ? ORDER BY c.id LIMIT 1`, tenant, e164)
	if err != nil {
		return "", fmt.Errorf("contact name by phone: %w", s.dialect.translate(err))
	}
	if len(rows) == 0 {
		return "", nil
	}
	return rows[0].DisplayName(), nil
}

// customDef is one custom field definition (resources.md §4.5).
type customDef struct {
	Key      string  `db:"field_key"`
	Type     string  `db:"type"`
	Options  *string `db:"options"`
	Required bool    `db:"required"`
	Default  *string `db:"default_value"`
}

func (d customDef) options() []string {
	var out []string
	if d.Options != nil {
		_ = json.Unmarshal([]byte(*d.Options), &out)
	}
	return out
}

// checkCustom checks an object's custom values against the tenant's
// definitions for its entity: every key defined, every value of its
// definition's type (and among its options), every required one present.
// A new object gets the defaults of definitions it leaves out. custom is
// replaced whole on update, so an update that sets it is checked whole.
func (ts *txStore) checkCustom(ctx context.Context, o Owner, entity string, old, patch Record) error {
	v, given := patch["custom"]
	if old != nil && !given {
		return nil
	}
	var defs []customDef
	if err := ts.tx.SelectContext(ctx, &defs, "SELECT field_key, type, options, required, default_value FROM custom_fields WHERE tenant_id = ? AND entity = ? ORDER BY field_key", o.TenantID, entity); err != nil {
		return fmt.Errorf("custom field definitions: %w", ts.dialect.translate(err))
	}
	custom, _ := v.(map[string]any)
	byKey := make(map[string]customDef, len(defs))
	keys := make([]string, 0, len(defs))
	for _, d := range defs {
		byKey[d.Key] = d
		keys = append(keys, d.Key)
	}
	verr := &ValidationError{}
	names := make([]string, 0, len(custom))
	for k := range custom {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		d, ok := byKey[k]
		if !ok {
			defined := "none are defined"
			if len(keys) > 0 {
				defined = "defined: " + strings.Join(keys, ", ")
			}
			verr.add("custom", "custom.%s: no custom field %q is defined for %s (%s)", k, k, entity, defined)
			return verr
		}
		nv, msg := customValue(d, custom[k])
		if msg != "" {
			verr.add("custom", "custom.%s: %s", k, msg)
			return verr
		}
		custom[k] = nv
	}
	for _, d := range defs {
		if _, ok := custom[d.Key]; ok {
			continue
		}
		if old == nil && d.Default != nil && *d.Default != "" {
			if custom == nil {
				custom = map[string]any{}
			}
			nv, msg := customValue(d, defaultValue(d))
			if msg == "" {
				custom[d.Key] = nv
				continue
			}
		}
		if d.Required {
			verr.add("custom", "custom.%s: required (custom field %q of %s)", d.Key, d.Key, entity)
			return verr
		}
	}
	if custom != nil {
		patch["custom"] = custom
	}
	return nil
}

// defaultValue reads a definition's default (kept as text) as the JSON
// value a client would send.
func defaultValue(d customDef) any {
	s := *d.Default
	switch d.Type {
	case "number":
		return json.Number(s)
	case "boolean":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return s
		}
		return b
	case "multi_select":
		var items []any
		if json.Unmarshal([]byte(s), &items) == nil {
			return items
		}
		return []any{s}
	}
	return s
}

// customValue checks one value against its definition and returns it as
// stored; msg says what is wrong.
func customValue(d customDef, v any) (any, string) {
	switch d.Type {
	case "string":
		if _, ok := v.(string); !ok {
			return nil, "must be a string"
		}
	case "number":
		switch x := v.(type) {
		case int64, float64:
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return nil, "must be a number"
			}
			if n, err := x.Int64(); err == nil {
				return n, ""
			}
			return f, ""
		default:
			return nil, "must be a number"
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return nil, "must be true or false"
		}
	case "date":
		s, ok := v.(string)
		if _, err := time.Parse(time.DateOnly, s); !ok || err != nil {
			return nil, "must be a date YYYY-MM-DD"
		}
	case "select":
		s, ok := v.(string)
		if !ok || !contains(d.options(), s) {
			return nil, "must be one of " + strings.Join(d.options(), ", ")
		}
	case "multi_select":
		items, ok := v.([]any)
		if !ok {
			return nil, "must be an array of " + strings.Join(d.options(), ", ")
		}
		for i, it := range items {
			if s, ok := it.(string); !ok || !contains(d.options(), s) {
				return nil, fmt.Sprintf("[%d] must be one of %s", i, strings.Join(d.options(), ", "))
			}
		}
	}
	return v, ""
}

// customFieldHooks keeps custom field definitions consistent with the
// values stored under them: a default must be of the field's type, and
// the type cannot change while objects hold a value for the key.
type customFieldHooks struct{ rules }

var _ beforeSaver = customFieldHooks{}

// customEntities maps a definition's entity to the resource holding values.
var customEntities = map[string]string{"contact": "contacts", "account": "accounts", "lead": "leads", "deal": "deals"}

func (h customFieldHooks) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	if err := h.rules.beforeSave(ctx, ts, o, old, patch); err != nil {
		return err
	}
	rec := merged(old, patch)
	d := customDef{Type: asString(rec["type"])}
	if opts := rec["options"]; opts != nil {
		js, _ := json.Marshal(opts)
		s := string(js)
		d.Options = &s
	}
	if def := asString(rec["default_value"]); def != "" {
		d.Default = &def
		if _, msg := customValue(d, defaultValue(d)); msg != "" {
			return FieldError("default_value", "%s (a %s field)", msg, d.Type)
		}
	}
	if old == nil {
		return nil
	}
	for _, f := range []string{"type", "entity", "field_key"} {
		if v, ok := patch[f]; !ok || asString(v) == asString(old[f]) {
			continue
		}
		table := customEntities[asString(old["entity"])]
		if table == "" {
			continue
		}
		key := asString(old["field_key"])
		n, err := ts.countCustomValues(ctx, o, table, key)
		if err != nil {
			return err
		}
		if n > 0 {
			return &ConflictError{Msg: fmt.Sprintf("custom field %s: cannot change %s while %d %s hold a value for it", key, f, n, table)}
		}
	}
	return nil
}

// countCustomValues counts the objects of table whose custom values hold key.
func (ts *txStore) countCustomValues(ctx context.Context, o Owner, table, key string) (int, error) {
	var rows []string
	err := ts.tx.SelectContext(ctx, &rows, "SELECT custom FROM "+table+" WHERE tenant_id = ? AND custom LIKE ? ESCAPE '!'", o.TenantID, "%"+likeEscape(`"`+key+`"`)+"%")
	if err != nil {
		return 0, fmt.Errorf("custom values of %s: %w", table, ts.dialect.translate(err))
	}
	n := 0
	for _, r := range rows {
		var m map[string]any
		if json.Unmarshal([]byte(r), &m) == nil {
			if _, ok := m[key]; ok {
				n++
			}
		}
	}
	return n, nil
}

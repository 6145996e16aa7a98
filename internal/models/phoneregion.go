package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// National phone numbers. E.164 fields of tenant resources also take a
// national number ("011 555 0000"), read with a default region as the
// field guide gives one: the object's own country where the resource has
// one (an emergency location's country, a messaging channel's
// default_country), else the tenant's country. Without a region only the
// international form is taken.

// regionFields names, per resource, the field holding the country its
// own phone numbers are read in.
var regionFields = map[string]string{
	"emergency_locations": "country",
	"messaging_channels":  "default_country",
}

// phoneRegion returns the region national numbers in input are read with
// when res (of owner o; key names the object on update, "" on create) has
// phone fields, or "".
func (s *Store) phoneRegion(ctx context.Context, res *Resource, o Owner, key string, input map[string]any) (string, error) {
	if res.Scope != TenantScope || !hasPhoneField(res.Fields) {
		return "", nil
	}
	if name := regionFields[res.Name]; name != "" {
		if v, ok := input[name].(string); ok && isCountry(v) {
			return v, nil
		}
		if _, given := input[name]; !given && key != "" {
			if old, err := s.Get(ctx, res, o, key); err == nil {
				if v, ok := old[name].(string); ok && isCountry(v) {
					return v, nil
				}
			}
		}
	}
	var country sql.NullString
	err := s.db.QueryRowContext(ctx, "SELECT country FROM tenants WHERE id = ?", o.TenantID).Scan(&country)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("country of tenant %q: %w", o.Tenant, s.dialect.translate(err))
	}
	return country.String, nil
}

// hasPhoneField reports whether any field (nested ones included) is E.164.
func hasPhoneField(fields []*Field) bool {
	for _, f := range fields {
		if f.Pattern == patE164 || hasPhoneField(f.Props) {
			return true
		}
	}
	return false
}

func isCountry(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// NationalNumberNote says, for the request schemas, how field f of res
// (an E.164 field, or one holding such numbers) also takes national
// numbers; "" when it does not.
func (r *Resource) NationalNumberNote(f *Field) string {
	if r.Scope != TenantScope || !hasPhoneField([]*Field{f}) {
		return ""
	}
	from := "the tenant's country"
	if name := regionFields[r.Name]; name != "" {
		from = "the " + name + " given or stored, else " + from
	}
	return "Phone numbers: international (+…), or national read with " + from + "; stored in E.164."
}

package crm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard/switchboard/models"
)

// Contact is a contact matched by one of its phone numbers.
type Contact struct {
	ID        int64  `db:"id"`
	FirstName string `db:"first_name"`
	LastName  string `db:"last_name"`
	Company   string `db:"company_name"`
	Phones    string `db:"phones"`
}

// DisplayName is how the contact is shown (caller id name, subjects).
func (c Contact) DisplayName() string {
	if n := strings.TrimSpace(c.FirstName + " " + c.LastName); n != "" {
		return n
	}
	return c.Company
}

// Normalise reads number as E.164: numbers with a leading + on their own,
// national numbers with the tenant's country. ok is false when it is not a
// valid phone number (extensions, short codes).
func Normalise(number, country string) (string, bool) {
	number = strings.TrimSpace(number)
	if len(number) < 6 || (!strings.HasPrefix(number, "+") && country == "") {
		return "", false
	}
	return models.NormalisePhone(number, country)
}

// ContactsByNumber finds a tenant's contacts with the E.164 number among
// their phones. The text search narrows the rows by the tenant's index;
// each phone is then compared exactly after normalising.
func ContactsByNumber(ctx context.Context, st *models.Store, tenantID int64, e164 string) ([]Contact, error) {
	var rows []Contact
	err := st.DB().SelectContext(ctx, &rows, `SELECT id, COALESCE(first_name, '') AS first_name, COALESCE(last_name, '') AS last_name,
		COALESCE(company_name, '') AS company_name, COALESCE(phones, '') AS phones
		FROM contacts WHERE tenant_id = ? AND phones LIKE ? ORDER BY id`, tenantID, "%"+e164+"%")
	if err != nil {
		return nil, fmt.Errorf("crm: contacts by number: %w", st.TranslateErr(err))
	}
	out := rows[:0]
	for _, c := range rows {
		var phones []struct {
			Number string `json:"number"`
		}
		if json.Unmarshal([]byte(c.Phones), &phones) != nil {
			continue
		}
		for _, p := range phones {
			if n, ok := Normalise(p.Number, ""); ok && n == e164 {
				out = append(out, c)
				break
			}
		}
	}
	return out, nil
}

package crm

import (
	"context"
	"strings"

	"github.com/switchboard/switchboard/internal/models"
)

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
// their phones: one lookup in the contacts' phone index (contact_phones,
// kept by every contact write).
func ContactsByNumber(ctx context.Context, st *models.Store, tenantID int64, e164 string) ([]models.ContactName, error) {
	return st.ContactsByPhone(ctx, tenantID, e164)
}

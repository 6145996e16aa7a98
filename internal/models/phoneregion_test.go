package models_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestNationalNumbersReadWithTheTenantsCountry: E.164 fields of a tenant
// resource take a national number of the tenant's country and store its
// E.164 form; without a country, and for a number invalid in it, the
// write is refused naming the field, and nothing is stored.
func TestNationalNumbersReadWithTheTenantsCountry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		tenants, exts := st.Registry().Resource("tenants"), st.Registry().Resource("extensions")
		o := newTenant(t, st)

		// No country yet: only international input.
		_, err := st.Create(ctx, exts, o, decode(t, `{"name":"1001","mobile":"082 555 0001"}`))
		wantFieldError(t, err, "mobile", "needs the tenant's country")

		if _, err := st.Update(ctx, tenants, models.Owner{}, o.Tenant, decode(t, `{"country":"ZA"}`)); err != nil {
			t.Fatal(err)
		}
		rec := mustCreate(t, st, "extensions", o, `{"name":"1001","mobile":"082 555 0001"}`)
		if rec["mobile"] != "+27825550001" {
			t.Errorf("national mobile stored as %v, want +27825550001", rec["mobile"])
		}
		// International input is still taken as it is, in any country.
		rec, err = st.Update(ctx, exts, o, "1001", decode(t, `{"mobile":"+44 20 7946 0018"}`))
		if err != nil || rec["mobile"] != "+442079460018" {
			t.Errorf("international mobile: %v %v", rec["mobile"], err)
		}
		// A number the ZA plan does not assign.
		_, err = st.Update(ctx, exts, o, "1001", decode(t, `{"mobile":"0015550000"}`))
		wantFieldError(t, err, "mobile", "national number of ZA")
		if got, _ := st.Get(ctx, exts, o, "1001"); got["mobile"] != "+442079460018" {
			t.Errorf("the refused change was stored: %v", got["mobile"])
		}

		// Nested numbers (a contact's phones) are read the same way.
		contact := mustCreate(t, st, "contacts", o, `{"first_name":"Ann","phones":[{"label":"work","number":"011 555 0000"}]}`)
		if phones, _ := contact["phones"].([]any); len(phones) != 1 || phones[0].(map[string]any)["number"] != "+27115550000" {
			t.Errorf("contact phones %v", contact["phones"])
		}
	})
}

// TestNationalNumbersReadWithTheObjectsOwnCountry: an emergency location's
// call-back number is read in the location's country, not the tenant's.
func TestNationalNumbersReadWithTheObjectsOwnCountry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		o := newTenant(t, st)
		if _, err := st.Update(ctx, st.Registry().Resource("tenants"), models.Owner{}, o.Tenant, decode(t, `{"country":"ZA"}`)); err != nil {
			t.Fatal(err)
		}
		loc := mustCreate(t, st, "emergency_locations", o,
			`{"name":"London","address_line1":"1 High St","country":"GB","emergency_callerid":"020 7946 0018"}`)
		if loc["emergency_callerid"] != "+442079460018" {
			t.Errorf("emergency_callerid stored as %v, want +442079460018 (read in GB)", loc["emergency_callerid"])
		}
		// On update the stored country applies when the input names none.
		res := st.Registry().Resource("emergency_locations")
		id := fmt.Sprint(loc["id"])
		rec, err := st.Update(ctx, res, o, id, decode(t, `{"emergency_callerid":"020 7946 0019"}`))
		if err != nil || rec["emergency_callerid"] != "+442079460019" {
			t.Errorf("update: %v %v", rec["emergency_callerid"], err)
		}
	})
}

func wantFieldError(t *testing.T, err error, field, words string) {
	t.Helper()
	var verr *models.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("err %v, want a validation error on %s", err, field)
	}
	if msg := verr.Fields[field]; !strings.Contains(msg, words) {
		t.Errorf("%s: %q, want it to contain %q (all: %v)", field, msg, words, verr.Fields)
	}
}

package dialplan

import (
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// formatCallerNumber writes a caller id number the way a trunk wants it
// (sip_trunks.callerid_format): e164 (+27215550100), e164_no_plus
// (27215550100) or national (0215550100, in the tenant's country). A
// number that cannot be read in the tenant's country is left as it is;
// the result is digits with at most a leading '+', or "".
func formatCallerNumber(num, format, country string) string {
	if !validCallerNumber(num) {
		return ""
	}
	region := strings.ToUpper(country)
	if len(region) != 2 || !allIn(region, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		region = ""
	}
	parsed, err := phonenumbers.Parse(num, firstNonEmpty(region, "ZZ"))
	if err != nil {
		return num
	}
	var out string
	switch format {
	case "national":
		if region == "" || int(parsed.GetCountryCode()) != phonenumbers.GetCountryCodeForRegion(region) {
			// Another country's number has no national form here.
			out = phonenumbers.Format(parsed, phonenumbers.E164)
		} else {
			out = digitsOnly(phonenumbers.Format(parsed, phonenumbers.NATIONAL))
		}
	case "e164_no_plus":
		out = strings.TrimPrefix(phonenumbers.Format(parsed, phonenumbers.E164), "+")
	default:
		out = phonenumbers.Format(parsed, phonenumbers.E164)
	}
	if !validCallerNumber(out) {
		return num
	}
	return out
}

// digitsOnly drops everything but 0-9.
func digitsOnly(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

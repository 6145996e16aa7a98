package dialplan

import "testing"

// TestFormatCallerNumber: each trunk format of a number of the tenant's
// country, another country's number under "national", and numbers that
// cannot be read, which are left as they are.
func TestFormatCallerNumber(t *testing.T) {
	for _, tt := range []struct{ num, format, country, want string }{
		{"+27115550100", "e164", "ZA", "+27115550100"},
		{"+27115550100", "e164_no_plus", "ZA", "27115550100"},
		{"+27115550100", "national", "ZA", "0115550100"},
		{"0115550100", "e164", "ZA", "+27115550100"},
		{"+442071234567", "national", "GB", "02071234567"},
		{"+442071234567", "national", "ZA", "+442071234567"},
		{"+442071234567", "national", "", "+442071234567"},
		{"0115550100", "e164", "", "0115550100"},
		{"0115550100", "e164", "${x}", "0115550100"},
		{"", "e164", "ZA", ""},
		{"${x}", "e164", "ZA", ""},
	} {
		if got := formatCallerNumber(tt.num, tt.format, tt.country); got != tt.want {
			t.Errorf("formatCallerNumber(%q, %q, %q) = %q, want %q", tt.num, tt.format, tt.country, got, tt.want)
		}
	}
}

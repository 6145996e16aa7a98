package messaging

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

var e164RE = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// normaliseNumber turns to into E.164: an international number (with +)
// as it is, a national one with the channel's default country. The number
// must be a possible and valid number for its country, as providers refuse
// the rest (Twilio 21211, Meta 131009) only after a round trip.
func normaliseNumber(to, country string) (string, error) {
	to = strings.TrimSpace(to)
	if to == "" {
		return "", fmt.Errorf("required: a phone number in international format (+27825550001)")
	}
	region := strings.ToUpper(country)
	if !strings.HasPrefix(to, "+") && region == "" {
		return "", fmt.Errorf("%q is not in international format and the channel has no default_country to read it with", to)
	}
	num, err := phonenumbers.Parse(to, region)
	if err != nil {
		return "", fmt.Errorf("%q is not a phone number: %v", to, err)
	}
	if !phonenumbers.IsValidNumber(num) {
		return "", fmt.Errorf("%q is not a valid phone number", to)
	}
	out := phonenumbers.Format(num, phonenumbers.E164)
	if !e164RE.MatchString(out) {
		return "", fmt.Errorf("%q does not form an E.164 number", to)
	}
	return out, nil
}

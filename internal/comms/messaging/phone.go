package messaging

import (
	"fmt"
	"strings"

	"github.com/switchboard/switchboard/internal/models"
)

// normaliseNumber turns to into E.164: an international number (with +)
// as it is, a national one with the channel's default country. The number
// must be valid for its country, as providers refuse the rest (Twilio
// 21211, Meta 131009) only after a round trip.
func normaliseNumber(to, country string) (string, error) {
	to = strings.TrimSpace(to)
	if to == "" {
		return "", fmt.Errorf("required: a phone number in international format (+27825550001)")
	}
	if !strings.HasPrefix(to, "+") && country == "" {
		return "", fmt.Errorf("%q is not in international format and the channel has no default_country to read it with", to)
	}
	out, ok := models.NormalisePhone(to, country)
	if !ok {
		return "", fmt.Errorf("%q is not a valid phone number", to)
	}
	return out, nil
}

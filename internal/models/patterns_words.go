package models

import (
	"fmt"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// patternWords says in words what each declared pattern accepts: clients
// see "must be …" rather than a regular expression. A test fails for a
// declared pattern missing here.
var patternWords = map[string]string{
	patTenant:           "2-32 letters, digits or underscores",
	patNumber:           "2-10 digits",
	patE164:             "a phone number in international E.164 form: + then country code and number, e.g. +27115550000",
	patDialable:         "1-32 of the characters 0-9 + * #",
	patDigitsCID:        "3-15 digits, optionally starting with +",
	patDisplayCID:       `a caller id like "Name" <1001> (name up to 64 characters, number up to 20 of 0-9 + * #)`,
	patLanguage:         "a language code like en or en-GB",
	patTemplateLanguage: "a WhatsApp template language like en, en_US or en-US",
	patCountry:          "an ISO 3166-1 alpha-2 country code in capitals, e.g. ZA",
	patPIN:              "4-10 digits",
	patHostname:         "a host name (letters, digits, dots and hyphens, up to 253 characters)",
	patEmail:            "an e-mail address like name@example.com",
	patRFC3339:          "an RFC 3339 time like 2026-01-31T17:00:00Z",
	patSlug:             "1-40 lower-case letters, digits or underscores",
	patChatChannel:      "1-64 lower-case letters, digits, dots, underscores or hyphens, starting with a letter or digit",
	patURL:              "an http:// or https:// URL",
	patDate:             "a date like 2026-01-31",
	patMoney:            "a decimal amount like 1234.50 (up to 12 digits, up to 4 decimals)",
	patColor:            "a colour like #1a2b3c",
	patTagName:          "1-32 letters, digits, spaces, dots, underscores or hyphens",
	patOrigin:           "an origin like https://crm.example.com or http://host:8080 (no path)",
	patSIPURI:           "a SIP URI like sip:user@host[:port][;transport=udp|tcp|tls]",
	patMAC:              "a MAC address like 00:1a:2b:3c:4d:5e",
	patCIDPfx:           "up to 16 characters without quotes, < or >",

	`^[!-~]{16,128}$`:                "16-128 printable ASCII characters without spaces",
	`^[!-~]{12,64}$`:                 "12-64 printable ASCII characters without spaces",
	`^.{12,}$`:                       "at least 12 characters",
	`^[0-9]{1,3}$`:                   "1-3 digits",
	`^[0-9]{1,4}$`:                   "1-4 digits",
	`^[0-9]{2,8}$`:                   "2-8 digits",
	`^[0-9]{3,10}$`:                  "3-10 digits",
	`^[0-9*]{0,2}$`:                  "up to 2 of the characters 0-9 *",
	`^[0-9*#]$`:                      "one DTMF key: 0-9, * or #",
	`^[0-9*#]{1,5}$`:                 "1-5 DTMF keys (0-9, * #)",
	`^[0-9+*#]{0,32}$`:               "up to 32 of the characters 0-9 + * #",
	`^[A-Z]{3}$`:                     "a three-letter ISO 4217 currency code in capitals, e.g. EUR",
	`^[a-z0-9_]{1,32}$`:              "1-32 lower-case letters, digits or underscores",
	`^[a-z_.]{1,64}$`:                "1-64 lower-case letters, dots or underscores",
	`^[a-z][a-z0-9_]{0,31}$`:         "a lower-case identifier: a letter, then up to 31 letters, digits or underscores",
	`^[a-z0-9-]{2,16}$`:              "2-16 lower-case letters, digits or hyphens",
	`^[a-z0-9._@-]{3,64}$`:           "3-64 lower-case letters, digits or . _ @ -",
	`^[A-Za-z0-9._@-]{1,64}$`:        "1-64 letters, digits or . _ @ -",
	`^[A-Za-z0-9+._@-]{0,64}$`:       "up to 64 letters, digits or + . _ @ -",
	`^[A-Za-z0-9_.-]{0,32}$`:         "up to 32 letters, digits or . _ -",
	`^[A-Za-z0-9_.:-]{1,64}$`:        "1-64 letters, digits or . _ : -",
	`^[A-Za-z0-9.:-]{1,255}$`:        "a host, host:port or IP address (letters, digits, dots, colons, hyphens)",
	`^[0-9]{1,18}$`:                  "1-18 digits (a voice prompt id)",
	`^([A-Z_]{3,40})?$`:              "a hangup cause like NORMAL_CLEARING or USER_BUSY (capitals and underscores), or empty",
	`^[A-Za-z0-9_.-]{1,64}$`:         "1-64 letters, digits or . _ -",
	`^[A-Za-z0-9+/]*={0,2}$`:         "base64 text",
	`^[^"<>\r\n]{0,64}$`:             "up to 64 characters without quotes, < or >",
	`^[0-9a-fA-F.:]+(/[0-9]{1,3})?$`: "an IPv4 or IPv6 address or CIDR block, e.g. 192.0.2.10 or 10.0.0.0/24",
	`^[A-Za-z0-9!#%()*+,./:;=?@\[\]^_|~-]{12,64}$`:                   "12-64 letters, digits or punctuation (no spaces, quotes, &, <, >, $, {, } or backslash)",
	`^[A-Za-z0-9 <>:;=/._-]{0,64}$`:                                  "up to 64 letters, digits, spaces or < > : ; = / . _ -",
	`^([01][0-9]|2[0-3]):[0-5][0-9]$`:                                "a time of day like 09:30 (00:00-23:59)",
	`^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$`:                        "a time of day like 17:00 (00:00-24:00)",
	`^([0-9+*#]{1,32}|anonymous)$`:                                   "1-32 of the characters 0-9 + * #, or anonymous",
	`^_?[0-9XZNxzn.!\[\]*#+-]{1,40}$`:                                "a dial pattern like _0XXXXXXXXX (digits, X Z N, [ ] ranges, . ! * # + -)",
	`^\*[0-9]{2,6}$`:                                                 "* then 2-6 digits",
	`^\*{1,2}[0-9]{0,6}$`:                                            "* or ** then up to 6 digits",
	`^(\+[1-9][0-9]{6,14}|[A-Za-z0-9 ]{1,11})$`:                      "an E.164 number like +27825550001, or an alphanumeric sender of 1-11 letters, digits or spaces",
	`^data:image/(png|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}$`:        "a data: URL of a PNG or SVG image (data:image/png;base64,…)",
	`^data:image/(png|svg\+xml|x-icon);base64,[A-Za-z0-9+/]+={0,2}$`: "a data: URL of a PNG, SVG or ICO image (data:image/png;base64,…)",
	`^data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/]+={0,2}$`:        "a data: URL of a PNG, JPEG or GIF image (data:image/png;base64,…)",
}

// patternMessage is the validation message for a value the pattern refused.
func patternMessage(pattern string) string {
	if w := patternWords[pattern]; w != "" {
		return "must be " + w
	}
	return "has an invalid format"
}

// PatternsWithoutWords lists declared patterns patternWords does not
// describe (for the registry test).
func PatternsWithoutWords(resources []*Resource) []string {
	var missing []string
	var walk func(fields []*Field)
	walk = func(fields []*Field) {
		for _, f := range fields {
			if f.Pattern != "" && patternWords[f.Pattern] == "" {
				missing = append(missing, f.Name+": "+f.Pattern)
			}
			walk(f.Props)
		}
	}
	for _, r := range resources {
		walk(r.Fields)
	}
	return missing
}

// normalisePhoneField validates a phone number against the libphonenumber
// metadata (a known country code and a number its numbering plan assigns) and
// returns its E.164 form: "+27 11 555-0000" becomes "+27115550000". A
// number without + is read as a national number of region ("011 555 0000"
// in ZA); with no region only international input is taken. The message
// says what is wrong in words.
func normalisePhoneField(s, region string) (string, string) {
	national := !strings.HasPrefix(strings.TrimSpace(s), "+")
	if national && region == "" {
		return "", patternMessage(patE164) + " (a national number needs the tenant's country)"
	}
	e164, ok := NormalisePhone(s, region)
	switch {
	case ok:
		return e164, ""
	case national:
		return "", fmt.Sprintf("not a valid phone number: neither international (+ then country code) nor a national number of %s", strings.ToUpper(region))
	}
	return "", patternMessage(patE164)
}

// NormalisePhone reads s as a phone number, international (+…) or, given a
// region (ISO 3166 alpha-2), national, and returns its E.164 form when the
// number is one its country's numbering plan assigns.
func NormalisePhone(s, region string) (string, bool) {
	s = strings.TrimSpace(s)
	if region == "" {
		region = "ZZ"
	}
	num, err := phonenumbers.Parse(s, strings.ToUpper(region))
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return "", false
	}
	return phonenumbers.Format(num, phonenumbers.E164), true
}

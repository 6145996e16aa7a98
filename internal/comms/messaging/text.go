package messaging

import (
	"strings"
	"unicode/utf16"
)

// Encodings of an SMS body.
const (
	GSM7 = "gsm7"
	UCS2 = "ucs2"
)

// gsm7Basic is the GSM 03.38 default alphabet; gsm7Extended are the
// characters sent as an escape plus one septet (two septets each).
const (
	gsm7Basic    = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	gsm7Extended = "^{}\\[~]|€\f"
)

// Segment sizes: a single SMS carries 160 GSM-7 septets or 70 UCS-2 code
// units; a concatenated one loses room to its user data header.
const (
	gsm7Single, gsm7Multi = 160, 153
	ucs2Single, ucs2Multi = 70, 67
)

// Encoding is how a body travels as SMS and how many parts it needs.
type Encoding struct {
	Name     string // gsm7 or ucs2
	Units    int    // septets (gsm7) or UTF-16 code units (ucs2)
	Segments int
}

// Encode picks GSM-7 when every character is in the GSM alphabet, UCS-2
// otherwise, and counts the segments the way handsets and carriers do
// (an escape pair or a surrogate pair is never split across segments).
func Encode(body string) Encoding {
	if units, ok := gsm7Units(body); ok {
		return Encoding{Name: GSM7, Units: units, Segments: segments(units, gsm7Single, gsm7Multi, gsm7Widths(body))}
	}
	codes := utf16.Encode([]rune(body))
	widths := make([]int, 0, len(body))
	for _, r := range body {
		widths = append(widths, utf16.RuneLen(r))
	}
	return Encoding{Name: UCS2, Units: len(codes), Segments: segments(len(codes), ucs2Single, ucs2Multi, widths)}
}

func gsm7Units(body string) (int, bool) {
	n := 0
	for _, r := range body {
		switch {
		case strings.ContainsRune(gsm7Basic, r):
			n++
		case strings.ContainsRune(gsm7Extended, r):
			n += 2
		default:
			return 0, false
		}
	}
	return n, true
}

func gsm7Widths(body string) []int {
	w := make([]int, 0, len(body))
	for _, r := range body {
		if strings.ContainsRune(gsm7Extended, r) {
			w = append(w, 2)
		} else {
			w = append(w, 1)
		}
	}
	return w
}

// segments packs characters of the given widths into parts of size multi
// (single when everything fits in one part).
func segments(units, single, multi int, widths []int) int {
	if units == 0 {
		return 1
	}
	if units <= single {
		return 1
	}
	parts, used := 1, 0
	for _, w := range widths {
		if used+w > multi {
			parts++
			used = 0
		}
		used += w
	}
	return parts
}

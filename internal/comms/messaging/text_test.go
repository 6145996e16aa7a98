package messaging

import (
	"strings"
	"testing"
)

func TestEncodeSegments(t *testing.T) {
	cases := []struct {
		name, body string
		enc        string
		units      int
		segments   int
	}{
		{"empty", "", GSM7, 0, 1},
		{"160 gsm fits one", strings.Repeat("a", 160), GSM7, 160, 1},
		{"161 gsm needs two", strings.Repeat("a", 161), GSM7, 161, 2},
		{"306 gsm is two", strings.Repeat("a", 306), GSM7, 306, 2},
		{"307 gsm is three", strings.Repeat("a", 307), GSM7, 307, 3},
		{"euro counts two septets", strings.Repeat("€", 80), GSM7, 160, 1},
		{"escape pair never split", strings.Repeat("a", 152) + "€" + strings.Repeat("b", 8), GSM7, 162, 2},
		{"gsm accented letters stay gsm", "àèùìòÄÖÑÜ", GSM7, 9, 1},
		{"one non-gsm letter makes ucs2", "Olá é àèùìò ÄÖÑÜ", UCS2, 16, 1},
		{"70 ucs2 fits one", strings.Repeat("ж", 70), UCS2, 70, 1},
		{"71 ucs2 needs two", strings.Repeat("ж", 71), UCS2, 71, 2},
		{"emoji is two code units", strings.Repeat("😀", 35), UCS2, 70, 1},
		{"134 ucs2 two parts", strings.Repeat("ж", 134), UCS2, 134, 2},
		{"135 ucs2 three parts", strings.Repeat("ж", 135), UCS2, 135, 3},
	}
	for _, c := range cases {
		got := Encode(c.body)
		if got.Name != c.enc || got.Units != c.units || got.Segments != c.segments {
			t.Errorf("%s: got %+v, want %s/%d units/%d segments", c.name, got, c.enc, c.units, c.segments)
		}
	}
}

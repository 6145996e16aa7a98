package xmldoc

import "unicode/utf8"

// Writer is a tiny append-only XML writer. encoding/xml's reflection costs
// too much on the hot path (every REGISTER and every call fetches XML), and
// our documents are flat enough to write by hand.
type Writer struct {
	b []byte
}

// NewWriter is a Writer whose buffer starts at size bytes.
func NewWriter(size int) *Writer { return &Writer{b: make([]byte, 0, size)} }

// Raw appends trusted, fixed markup.
func (w *Writer) Raw(s string) { w.b = append(w.b, s...) }

// Attr appends ` name="value"` with value escaped (see EscapeTo).
func (w *Writer) Attr(name, value string) {
	w.b = append(w.b, ' ')
	w.b = append(w.b, name...)
	w.b = append(w.b, '=', '"')
	w.b = EscapeTo(w.b, value)
	w.b = append(w.b, '"')
}

// Param writes <tag name=.. value=../>, the shape used by params,
// variables and gateway settings alike.
func (w *Writer) Param(tag, name, value string) {
	w.Raw("<")
	w.Raw(tag)
	w.Attr("name", name)
	w.Attr("value", value)
	w.Raw("/>\n")
}

// Bytes is the document written so far.
func (w *Writer) Bytes() []byte { return w.b }

// EscapeTo appends s escaped for XML text and attribute values.
//
// Besides the five XML entities, every '$' becomes "&#36;". FreeSWITCH runs
// its config preprocessor over the raw HTTP response before parsing the XML:
// it replaces each "$${name}" with a global variable (so a display name
// "$${default_password}" would leak the default password into the document)
// whatever the surrounding escaping. Written as &#36; the dollar is invisible
// to the preprocessor and the XML parser turns it back into '$', so values we
// carry verbatim (passwords, names) arrive intact. Run-time expansion of
// "${...}" is a separate danger that escaping cannot solve; see sanitizeName
// and the whitelists in package dialplan's validate.go. Control characters other than tab, LF
// and CR are dropped because XML 1.0 cannot carry them; invalid UTF-8 bytes
// become U+FFFD for the same reason.
func EscapeTo(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		// Runs of bytes that stay as they are are copied at once: most
		// values (names, numbers, hashes) are one such run.
		j := i
		for j < len(s) && plainXML[s[j]] {
			j++
		}
		b = append(b, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		if c < 0x80 {
			switch c {
			case '&':
				b = append(b, "&amp;"...)
			case '<':
				b = append(b, "&lt;"...)
			case '>':
				b = append(b, "&gt;"...)
			case '"':
				b = append(b, "&quot;"...)
			case '\'':
				b = append(b, "&apos;"...)
			case '$':
				b = append(b, "&#36;"...)
			case '\t':
				b = append(b, "&#9;"...)
			case '\n':
				b = append(b, "&#10;"...)
			case '\r':
				b = append(b, "&#13;"...)
			default:
				if c >= 0x20 && c != 0x7f {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\uFFFD' && size == 1 || !xmlChar(r) {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// plainXML marks the ASCII bytes EscapeTo copies unchanged.
var plainXML = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		switch c {
		case '&', '<', '>', '"', '\'', '$':
		default:
			t[c] = true
		}
	}
	return t
}()

// xmlChar reports whether r is allowed in XML 1.0 text (non-ASCII part).
func xmlChar(r rune) bool {
	return (r >= 0x80 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

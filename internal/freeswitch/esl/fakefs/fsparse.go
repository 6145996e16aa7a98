package fakefs

import "strings"

// This file ports FreeSWITCH 1.10's string splitters byte for byte, so the
// fake accepts and misreads exactly what the real switch does:
// switch_separate_string and cleanup_separated_string (src/switch_utils.c),
// switch_find_end_paren (src/switch_utils.c), switch_event_create_brackets
// (src/switch_event.c) and the leg splitting of switch_ivr_originate
// (src/switch_ivr_originate.c).
//
// The consequence that matters most: the originate API first splits its
// command line at spaces with switch_separate_string(' '), which strips
// single quotes, so "{a='x,y'}" reaches the {} parser as "{a=x,y}" and a
// is "x". Lists must use the "{^^;a=x,y;b=z}" delimiter override or "\,".

const escapeMeta = '\\'

// separateString is switch_separate_string: it splits buf at delim (a
// leading "^^<c>" replaces delim by c) into at most max elements, the last
// keeping the rest, honouring single quotes and backslash escapes while
// splitting, then strips quotes, escapes and surrounding spaces from every
// element.
func separateString(buf string, delim byte, max int) []string {
	if buf == "" || max <= 0 {
		return nil
	}
	if strings.HasPrefix(buf, "^^") && len(buf) >= 4 {
		delim, buf = buf[2], buf[3:]
	}
	if delim == ' ' {
		return separateBlank(buf, max)
	}
	return separateChar(buf, delim, max)
}

// separateChar is separate_string_char_delim.
func separateChar(buf string, delim byte, max int) []string {
	b := []byte(buf)
	var starts []int
	inQuotes, finding := false, false
	for i := 0; i < len(b) && len(starts) < max; {
		if !finding {
			starts = append(starts, i)
			finding = true
			continue
		}
		switch {
		case b[i] == escapeMeta:
			i++
		case b[i] == '\'' && (inQuotes || strings.IndexByte(string(b[i+1:]), '\'') >= 0):
			inQuotes = !inQuotes
		case b[i] == delim && !inQuotes:
			b[i] = 0
			finding = false
		}
		i++
	}
	return cleanupAll(b, starts, delim)
}

// separateBlank is separate_string_blank_delim: runs of spaces separate,
// a single quote toggles grouping (matched or not).
func separateBlank(buf string, max int) []string {
	const (
		start = iota
		skipInitial
		find
		skipEnding
	)
	b := []byte(buf)
	var starts []int
	inQuotes, state := false, start
	for i := 0; i < len(b) && len(starts) < max; {
		switch state {
		case start:
			starts = append(starts, i)
			state = skipInitial
		case skipInitial:
			if b[i] == ' ' {
				i++
			} else {
				state = find
			}
		case find:
			switch {
			case b[i] == escapeMeta:
				i++
			case b[i] == '\'':
				inQuotes = !inQuotes
			case b[i] == ' ' && !inQuotes:
				b[i] = 0
				state = skipEnding
			}
			i++
		case skipEnding:
			if b[i] == ' ' {
				i++
			} else {
				state = start
			}
		}
	}
	return cleanupAll(b, starts, 0)
}

func cleanupAll(b []byte, starts []int, delim byte) []string {
	out := make([]string, len(starts))
	for n, s := range starts {
		e := s
		for e < len(b) && b[e] != 0 {
			e++
		}
		out[n] = cleanupSeparated(b[s:e], delim)
	}
	return out
}

// cleanupSeparated is cleanup_separated_string: it drops leading spaces
// and trailing spaces outside quotes, removes single quotes that have a
// partner, and resolves \' \" \<delim> \\ \n \r \t \s (any other backslash
// stays).
func cleanupSeparated(str []byte, delim byte) string {
	i := 0
	for i < len(str) && str[i] == ' ' {
		i++
	}
	var dest []byte
	end := 0
	inQuotes := false
	for ; i < len(str); i++ {
		esc := false
		if str[i] == escapeMeta && i+1 < len(str) {
			n := str[i+1]
			e := unescapeChar(n)
			if n == '\'' || n == '"' || (delim != 0 && n == delim) || n == escapeMeta || e != n {
				i++
				dest = append(dest, e)
				end = len(dest)
				esc = true
			}
		}
		if esc {
			continue
		}
		if str[i] == '\'' && (inQuotes || strings.IndexByte(string(str[i+1:]), '\'') >= 0) {
			if inQuotes = !inQuotes; inQuotes {
				end = len(dest)
			}
			continue
		}
		dest = append(dest, str[i])
		if str[i] != ' ' || inQuotes {
			end = len(dest)
		}
	}
	return string(dest[:end])
}

func unescapeChar(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 's':
		return ' '
	}
	return c
}

// findEndParen is switch_find_end_paren: the index in s of the close
// matching the open s starts with (after spaces), or -1.
func findEndParen(s string, open, close byte) int {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if i >= len(s) || s[i] != open {
		return -1
	}
	depth := 1
	for i++; i < len(s); i++ {
		if s[i] == open && open != close {
			depth++
		} else if s[i] == close {
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// createBrackets is switch_event_create_brackets for one block: data
// starts (after spaces) with open; the block up to its matching close is
// split at delim (or at the character after a leading "^^"), every element
// at its first '=', and elements without a value are dropped. It returns
// the variables and what follows the block; ok is false when the block is
// not closed (FreeSWITCH logs "Parse Error!").
//
// (FreeSWITCH's attempt to merge adjacent blocks there never fires: it
// looks for the next open starting at the close itself; callers loop
// over blocks as switch_ivr_originate does.)
func createBrackets(data string, open, close, delim byte) (vars []Header, rest string, ok bool) {
	end := findEndParen(data, open, close)
	if end < 0 {
		return nil, data, false
	}
	vdata := data[1:end] // C: vdata++ past the first byte, not past spaces
	rest = data[end+1:]
	if strings.HasPrefix(vdata, "^^") && len(vdata) >= 3 {
		delim, vdata = vdata[2], vdata[3:]
	}
	for _, el := range separateString(vdata, delim, 1024) {
		kv := separateString(el, '=', 2)
		if len(kv) == 2 {
			vars = append(vars, Header{kv[0], kv[1]})
		}
	}
	return vars, rest, true
}

const (
	quotedEscComma   = 1 // QUOTED_ESC_COMMA
	unquotedEscComma = 2 // UNQUOTED_ESC_COMMA
)

// splitLegs is switch_ivr_originate's split of a dial string (after its
// <> and {} blocks) into failover groups at '|' and simultaneous legs at
// ',' — commas inside a leg's [] block are kept, and become the [] block's
// delimiter unless they were inside quotes or the block starts with "^^".
func splitLegs(data string) [][]string {
	var groups [][]string
	for _, pipe := range separateString(data, '|', 128) {
		p := []byte(pipe)
		end, q, alt := -1, false, false
		for i := 0; i < len(p); i++ {
			if end < 0 && p[i] == '[' {
				if e := findEndParen(string(p[i:]), '[', ']'); e >= 0 {
					end = i + e
				}
				alt = i+2 < len(p) && p[i+1] == '^' && p[i+2] == '^'
				q = false
			}
			if p[i] == '\'' {
				q = !q
			}
			if end >= 0 && i < end && p[i] == ',' && (i == 0 || p[i-1] != '\\') {
				if q || alt {
					p[i] = quotedEscComma
				} else {
					p[i] = unquotedEscComma
				}
			}
			if i == end {
				end = -1
			}
		}
		groups = append(groups, separateString(string(p), ',', 128))
	}
	return groups
}

// legVars parses a leg's [] blocks the way switch_ivr_originate does.
func legVars(leg string) (vars []Header, endpoint string, ok bool) {
	for strings.HasPrefix(leg, "[") {
		bend := findEndParen(leg, '[', ']')
		if bend < 0 {
			return vars, leg, false
		}
		b := []byte(leg)
		for i := 1; i < bend; i++ {
			if b[i] == quotedEscComma {
				b[i] = ','
			}
		}
		v, rest, ok := createBrackets(string(b), '[', ']', unquotedEscComma)
		if !ok || rest == string(b) {
			return vars, leg, false
		}
		vars, leg = append(vars, v...), rest
	}
	return vars, leg, true
}

// ParseDialString reads a bridge or originate dial string (application
// data, not an API line) as switch_ivr_originate does and returns the
// first leg's variables ({} then []) and endpoint; ok is false where
// FreeSWITCH logs "Parse Error!".
func ParseDialString(s string) (vars []Header, endpoint string, ok bool) {
	d, ok := parseDial(s)
	return d.vars, d.endpoint, ok
}

// SeparateString is FreeSWITCH's switch_separate_string (see
// separateString), for tests that read application arguments as the
// application does.
func SeparateString(s string, delim byte, max int) []string { return separateString(s, delim, max) }

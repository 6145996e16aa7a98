package dialplan

import (
	"fmt"
	"strings"
)

// Outbound route patterns are Asterisk style (resources.md §2.7): X = [0-9],
// Z = [1-9], N = [2-9], '.' = one or more of anything, '!' = zero or more,
// [...] = a class of digits and ranges, '-' outside a class is a readability
// separator, a leading '_' is optional, anything else is a literal 0-9 * # +.
// No user regex ever reaches FreeSWITCH: we decide the match in Go and render
// the dialled number itself, escaped, as the condition.

// patTok is one compiled pattern element.
type patTok struct {
	set  string // allowed bytes; "" = any
	rep  byte   // 0 = exactly one, '+' = one or more, '*' = zero or more
	text string // regex form
}

// compilePattern parses an Asterisk pattern.
func compilePattern(p string) ([]patTok, error) {
	p = strings.TrimPrefix(p, "_")
	if p == "" || len(p) > 40 {
		return nil, fmt.Errorf("pattern %q: want 1-40 characters", p)
	}
	var toks []patTok
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == 'X':
			toks = append(toks, patTok{set: "0123456789", text: "[0-9]"})
		case c == 'Z':
			toks = append(toks, patTok{set: "123456789", text: "[1-9]"})
		case c == 'N':
			toks = append(toks, patTok{set: "23456789", text: "[2-9]"})
		case c == '.':
			toks = append(toks, patTok{rep: '+', text: ".+"})
		case c == '!':
			toks = append(toks, patTok{rep: '*', text: ".*"})
		case c == '-':
			// separator, as in _1-NXX-XXXX
		case c == '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 2 {
				return nil, fmt.Errorf("pattern %q: bad class", p)
			}
			set, err := expandClass(p[i+1 : i+end])
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %w", p, err)
			}
			toks = append(toks, patTok{set: set, text: "[" + regexQuote(set) + "]"})
			i += end
		case c >= '0' && c <= '9' || c == '*' || c == '#' || c == '+':
			toks = append(toks, patTok{set: string(c), text: regexQuote(string(c))})
		default:
			return nil, fmt.Errorf("pattern %q: character %q not allowed", p, c)
		}
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("pattern %q: empty", p)
	}
	return toks, nil
}

// expandClass turns "0-35" into "012345".
func expandClass(c string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(c); i++ {
		lo := c[i]
		if !(lo >= '0' && lo <= '9' || lo == '*' || lo == '#' || lo == '+') {
			return "", fmt.Errorf("class [%s]: character %q not allowed", c, lo)
		}
		if i+2 < len(c) && c[i+1] == '-' {
			hi := c[i+2]
			if lo > '9' || hi < lo || hi > '9' {
				return "", fmt.Errorf("class [%s]: bad range", c)
			}
			for d := lo; d <= hi; d++ {
				b.WriteByte(d)
			}
			i += 2
			continue
		}
		b.WriteByte(lo)
	}
	return b.String(), nil
}

func regexQuote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`\.+*?()|[]{}^$#-`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// PatternRegexp converts an outbound route pattern to the equivalent
// anchored regular expression (for display, validation and tests).
func PatternRegexp(pattern string) (string, error) {
	toks, err := compilePattern(pattern)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteByte('^')
	for _, t := range toks {
		b.WriteString(t.text)
	}
	b.WriteByte('$')
	return b.String(), nil
}

// MatchPattern reports whether number matches the outbound route pattern.
// It is a small backtracking matcher: faster than compiling a regexp on
// every render, and equivalent to PatternRegexp (tested).
func MatchPattern(pattern, number string) bool {
	toks, err := compilePattern(pattern)
	if err != nil {
		return false
	}
	return matchToks(toks, number)
}

func matchToks(toks []patTok, s string) bool {
	if len(toks) == 0 {
		return s == ""
	}
	t := toks[0]
	one := func(c byte) bool { return t.set == "" || strings.IndexByte(t.set, c) >= 0 }
	switch t.rep {
	case 0:
		return s != "" && one(s[0]) && matchToks(toks[1:], s[1:])
	default:
		min := 1
		if t.rep == '*' {
			min = 0
		}
		for n := len(s); n >= min; n-- { // greedy, then back off
			if matchToks(toks[1:], s[n:]) {
				return true
			}
		}
		return false
	}
}

// compiledPattern is a pattern compiled once; ok is false for a pattern
// that does not compile (it then never matches, as with MatchPattern).
type compiledPattern struct {
	toks []patTok
	ok   bool
}

func compile(p string) *compiledPattern {
	toks, err := compilePattern(p)
	return &compiledPattern{toks: toks, ok: err == nil}
}

// matches reports whether number matches the pattern, using the compiled
// form when Prepare made one.
func (pt Pattern) matches(number string) bool {
	c := pt.compiled
	if c == nil {
		c = compile(pt.Match)
	}
	return c.ok && matchToks(c.toks, number)
}

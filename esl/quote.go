package esl

import (
	"fmt"
	"strings"
)

// varForbidden are the characters that would end or reshape a {}/[] variable
// block, start an api or variable expansion, or split the originate
// arguments in a way quoting cannot undo: FreeSWITCH has no escape that
// survives every parsing layer, so these are refused, not escaped.
const varForbidden = ",{}[]<>|'\"\\$^`"

// QuoteVar makes v safe as a channel variable value inside an originate or
// bridge {a=v} / [a=v] block. Values with spaces come back wrapped in single
// quotes; values containing any of , { } [ ] < > | ' " \ $ ^ `, the
// enterprise separator :_:, or control characters (newline included) are
// refused.
func QuoteVar(v string) (string, error) {
	if err := checkChars(v, varForbidden); err != nil {
		return "", fmt.Errorf("quote channel variable %q: %w", v, err)
	}
	if strings.Contains(v, ":_:") {
		return "", fmt.Errorf("quote channel variable %q: contains :_:", v)
	}
	if strings.Contains(v, " ") {
		return "'" + v + "'", nil
	}
	return v, nil
}

// QuoteVarList is QuoteVar for a comma-separated list value (toll_allow's
// "internal,local,national"): commas are allowed and the value is wrapped in
// single quotes whenever it has a comma or a space, the grouping the
// originate's {} parser honours. It is meant for one parsing layer (an
// originate's own variables), not for dial strings nested in app data.
func QuoteVarList(v string) (string, error) {
	if err := checkChars(v, strings.ReplaceAll(varForbidden, ",", "")); err != nil {
		return "", fmt.Errorf("quote channel variable %q: %w", v, err)
	}
	if strings.Contains(v, ":_:") {
		return "", fmt.Errorf("quote channel variable %q: contains :_:", v)
	}
	if strings.ContainsAny(v, ", ") {
		return "'" + v + "'", nil
	}
	return v, nil
}

// argForbidden adds the characters that turn an argument into an
// application call (&app(...)) or a separate word.
const argForbidden = varForbidden + "&()"

// SafeArg checks v for use as one bare argument of an API command line (a
// UUID, a destination number, a context, a file path): it must be non-empty
// and free of spaces, control characters and , { } [ ] < > | ' " \ $ ^ ` & ( ).
// It returns v unchanged when it is safe.
func SafeArg(v string) (string, error) {
	if v == "" {
		return "", fmt.Errorf("command argument: empty")
	}
	if strings.ContainsAny(v, " ") {
		return "", fmt.Errorf("command argument %q: contains a space", v)
	}
	if err := checkChars(v, argForbidden); err != nil {
		return "", fmt.Errorf("command argument %q: %w", v, err)
	}
	return v, nil
}

func checkChars(v, forbidden string) error {
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("contains control character %U", r)
		}
		if strings.ContainsRune(forbidden, r) {
			return fmt.Errorf("contains %q", r)
		}
	}
	return nil
}

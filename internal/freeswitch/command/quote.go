package command

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

// varBlockSep is the element separator of the blocks VarBlock builds. It
// is declared with FreeSWITCH's "^^<c>" override, the only grouping that
// survives the originate API: mod_commands splits the command line at
// spaces with switch_separate_string, which strips single quotes, and
// switch_event_create_brackets then splits the {} block at every comma
// (checked on FreeSWITCH 1.10.12: {toll_allow='internal,local,national'}
// set toll_allow to "internal").
const varBlockSep = ";"

// QuoteListVar makes v safe as a value in a VarBlock: commas are allowed
// (toll_allow's "internal,local,national"); the block's separator ;, and
// everything QuoteVar refuses but the comma, are refused; values with
// spaces come back single quoted, which keeps them one argument through
// the API's space split (that split removes the quotes). It is meant for
// one parsing layer (an originate API command's own variables), not for
// dial strings nested in application data.
func QuoteListVar(v string) (string, error) {
	if err := checkChars(v, strings.ReplaceAll(varForbidden, ",", "")+varBlockSep); err != nil {
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

// VarBlock joins name=value elements (values from QuoteListVar) into an
// originate's variable block with the ^^; separator override:
// {^^;a=1;toll_allow=internal,local}.
func VarBlock(elems []string) string {
	return "{^^" + varBlockSep + strings.Join(elems, varBlockSep) + "}"
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

// DisplayText keeps what QuoteListVar can carry of a value that is only
// shown (a caller's name derived from an extension's first and last
// names, which may well be "O'Brien"): it drops the characters
// QuoteListVar refuses and breaks the :_: separator, so a call is placed
// with "OBrien" rather than refused over punctuation.
func DisplayText(v string) string {
	forbidden := strings.ReplaceAll(varForbidden, ",", "") + varBlockSep
	v = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(forbidden, r) {
			return -1
		}
		return r
	}, v)
	for strings.Contains(v, ":_:") {
		v = strings.ReplaceAll(v, ":_:", ":")
	}
	return strings.TrimSpace(v)
}

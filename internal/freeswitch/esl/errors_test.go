package esl

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorsWrap(t *testing.T) {
	if !errors.Is(ErrNodeDown, ErrNoNode) {
		t.Error("ErrNodeDown does not wrap ErrNoNode")
	}
	e := &CommandError{Node: "fs1", Command: "api uuid_kill 5c2a secret-ish", Reply: "-ERR No such channel!\n"}
	if got := e.Error(); got != "esl fs1: api uuid_kill: -ERR No such channel!" {
		t.Errorf("Error() = %q", got)
	}
	if strings.Contains(e.Error(), "secret-ish") {
		t.Error("Error() carries the arguments")
	}
}

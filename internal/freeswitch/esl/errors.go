package esl

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoNode means no FreeSWITCH node can take the request; the HTTP layer
// answers 503. ErrNodeDown wraps it, so errors.Is(err, ErrNoNode) also
// holds for a down node.
var ErrNoNode = errors.New("no freeswitch node available")

// ErrNodeDown is returned at once, wrapped with the node name, when the
// node's command connection is not up.
var ErrNodeDown = fmt.Errorf("node down: %w", ErrNoNode)

// ErrUnknownNode is returned for a node name the pool was not built with.
var ErrUnknownNode = errors.New("unknown freeswitch node")

// ErrDisconnected is returned when the connection dropped while a command
// was in flight: the command may or may not have run.
var ErrDisconnected = errors.New("esl connection lost during command")

// CommandError is FreeSWITCH's refusal of a command: an api body or a
// Reply-Text starting with "-ERR" or "-USAGE".
type CommandError struct {
	Node    string
	Command string
	// Reply is FreeSWITCH's text as received, e.g. "-ERR No such channel!\n".
	Reply string
}

// Error includes FreeSWITCH's text.
func (e *CommandError) Error() string {
	return fmt.Sprintf("esl %s: %s: %s", e.Node, verb(e.Command), strings.TrimSpace(e.Reply))
}

// verb returns the command name only, so that errors and logs do not carry
// whole dial strings.
func verb(cmd string) string {
	f := strings.Fields(cmd)
	switch {
	case len(f) == 0:
		return ""
	case (f[0] == "api" || f[0] == "bgapi") && len(f) > 1:
		return f[0] + " " + f[1]
	default:
		return f[0]
	}
}

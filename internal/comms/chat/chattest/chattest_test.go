package chattest

import (
	"net"
	"testing"
)

// TestStartMovesOffATakenPort: a port taken between its choice and
// ejabberd's bind (here held on purpose for the first attempt) makes Start
// try other ports instead of failing.
func TestStartMovesOffATakenPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	attempts := 0
	pickPorts = func(t testing.TB, n int) []int {
		attempts++
		ports := freePorts(t, n)
		if attempts == 1 {
			ports[2] = taken.Addr().(*net.TCPAddr).Port // the API port
		}
		return ports
	}
	defer func() { pickPorts = freePorts }()
	s := Start(t, "chat.test")
	if attempts != 2 || !s.ready() {
		t.Fatalf("started after %d attempts, ready %v", attempts, s.ready())
	}
}

// ejabberd's ports are chosen below the kernel's range for outgoing
// connections, so none dialling out takes one while ejabberd is stopped
// for an outage (its restart binds the same ports).
func TestFreePortsOutsideTheOutgoingRange(t *testing.T) {
	low := ephemeralLow()
	for i := 0; i < 20; i++ {
		ports := freePorts(t, 3)
		seen := map[int]bool{}
		for _, p := range ports {
			if p < minPort || p >= low || seen[p] {
				t.Fatalf("ports %v: want three distinct in [%d, %d)", ports, minPort, low)
			}
			seen[p] = true
		}
	}
}

package fakefs

import (
	"bufio"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// conn is one client connection. Every frame to the client goes through out,
// drained by a single writer, so replies and events keep their order.
type conn struct {
	id  int
	srv *Server
	nc  net.Conn
	out chan []byte

	killOnce sync.Once
	dead     chan struct{}

	mu     sync.Mutex
	authed bool
	format string
	all    bool
	events map[string]bool // true: subscribed, false: nixed
	// subclasses are the CUSTOM subclasses subscribed to: the names after
	// CUSTOM in an event command (mod_event_socket's event_hash).
	subclasses map[string]bool
	filters    []Header
	// busy is set while a blocking api command runs: like mod_event_socket,
	// events queue up meanwhile and follow the api/response.
	busy bool
	held [][]byte
}

// closeMarker asks the writer to close the socket after what precedes it.
var closeMarker = []byte(nil)

func newConn(s *Server, id int, nc net.Conn) *conn {
	return &conn{
		id:         id,
		srv:        s,
		nc:         nc,
		out:        make(chan []byte, 4096),
		dead:       make(chan struct{}),
		events:     make(map[string]bool),
		subclasses: make(map[string]bool),
	}
}

// send queues a frame; a client too slow to drain 4096 frames is dropped.
func (c *conn) send(b []byte) {
	select {
	case <-c.dead:
	case c.out <- b:
	default:
		c.kill()
	}
}

// closeAfter queues a last frame and then the close.
func (c *conn) closeAfter(last []byte) {
	c.send(last)
	c.send(closeMarker)
}

// kill closes the connection. It may run with the server lock held (an
// event delivery that finds the queue full), so the removal from the
// server's table happens on its own goroutine; until then sends to the dead
// connection return at once.
func (c *conn) kill() {
	c.killOnce.Do(func() {
		close(c.dead)
		_ = c.nc.Close()
		go c.srv.removeConn(c)
	})
}

func (c *conn) waitClosed(d time.Duration) {
	select {
	case <-c.dead:
	case <-time.After(d):
		c.kill()
	}
}

func (c *conn) writeLoop() {
	for {
		select {
		case <-c.dead:
			return
		case b := <-c.out:
			if b == nil {
				c.kill()
				return
			}
			_ = c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.nc.Write(b); err != nil {
				c.kill()
				return
			}
		}
	}
}

func (c *conn) serve() {
	go c.writeLoop()
	c.send([]byte("Content-Type: auth/request\n\n"))
	r := bufio.NewReader(c.nc)
	for {
		line, hdr, body, err := readCommand(r)
		if err != nil {
			c.kill()
			return
		}
		c.srv.record(line)
		if !c.handle(line, hdr, body) {
			// The writer closes the socket once the goodbye is flushed.
			c.waitClosed(2 * time.Second)
			return
		}
	}
}

// maxPacket bounds a command's header block, as mod_event_socket's read
// buffer does; a longer block is cut and parsed as it stands.
const maxPacket = 64 << 10

// readCommand reads one client command the way mod_event_socket's
// read_packet does. Bytes are collected up to the second LF with only CRs in
// between (a blank line), leading CRs and LFs skipped. The block is then cut
// into segments, each ending at the first CR of what remains if there is one,
// else at its first LF; the first segment is the command, the others are
// "Name: value" headers. So a message whose only CRs are in the final CRLF
// CRLF ("bgapi X\nJob-UUID: Y\r\n\r\n") is one command line with the
// header text in its arguments, as on the real switch.
func readCommand(r *bufio.Reader) (string, map[string]string, string, error) {
	var block []byte
	crcount := 0
	for crcount < 2 && len(block) < maxPacket {
		b, err := r.ReadByte()
		if err != nil {
			return "", nil, "", err
		}
		if len(block) == 0 && (b == '\r' || b == '\n') {
			continue
		}
		block = append(block, b)
		switch b {
		case '\n':
			crcount++
		case '\r':
		default:
			crcount = 0
		}
	}
	first, hdr := parsePacket(string(block))
	var body string
	if n, err := strconv.Atoi(hdr["Content-Length"]); err == nil && n > 0 && n <= 16<<20 {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", nil, "", err
		}
		body = string(b)
	}
	return first, hdr, body, nil
}

// parsePacket splits a header block into the command and its headers (see
// readCommand).
func parsePacket(block string) (string, map[string]string) {
	hdr := make(map[string]string)
	first := ""
	for i, rest := 0, block; rest != ""; i++ {
		end := strings.IndexByte(rest, '\r')
		if end < 0 {
			end = strings.IndexByte(rest, '\n')
		}
		seg := rest
		if end >= 0 {
			seg, rest = rest[:end], strings.TrimLeft(rest[end:], "\r\n")
		} else {
			rest = ""
		}
		if i == 0 {
			first = seg
			continue
		}
		if k, v, ok := strings.Cut(seg, ":"); ok && k != "" {
			hdr[textproto.CanonicalMIMEHeaderKey(k)] = strings.TrimLeft(v, " ")
		}
	}
	return first, hdr
}

// handle answers one command; it returns false when the connection ends.
func (c *conn) handle(line string, hdr map[string]string, body string) bool {
	word, rest, _ := strings.Cut(line, " ")
	word = strings.ToLower(word)
	rest = strings.TrimSpace(rest)
	if !c.isAuthed() {
		switch word {
		case "auth":
			if rest != c.srv.opts.Password {
				c.send(commandReply("-ERR invalid"))
				c.closeAfter(disconnectNotice(byeText))
				return false
			}
			c.mu.Lock()
			c.authed = true
			c.mu.Unlock()
			c.send(commandReply("+OK accepted"))
		case "userauth":
			c.send(commandReply("-ERR invalid"))
			c.closeAfter(disconnectNotice(byeText))
			return false
		case "exit":
			c.send(commandReply("+OK bye"))
			c.closeAfter(disconnectNotice(byeText))
			return false
		default:
			c.send(commandReply("-ERR command not found"))
		}
		return true
	}
	switch word {
	case "exit":
		c.send(commandReply("+OK bye"))
		c.closeAfter(disconnectNotice(byeText))
		return false
	case "event":
		c.send(commandReply(c.subscribe(rest)))
	case "nixevent":
		c.send(commandReply(c.nix(rest)))
	case "noevents":
		c.send(commandReply(c.noEvents()))
	case "filter":
		c.send(commandReply(c.filter(rest)))
	case "api":
		c.setBusy(true)
		body := c.srv.runAPI(rest)
		c.send(apiResponse(body))
		c.setBusy(false)
	case "bgapi":
		job := hdr["Job-Uuid"]
		if job == "" {
			job = uuid.NewString()
		}
		c.send(commandReply("+OK Job-UUID: "+job, Header{"Job-UUID", job}))
		go c.srv.runBackground(job, rest)
	case "sendevent":
		c.send(commandReply(c.srv.sendEvent(rest, hdr, body)))
	case "linger", "nolinger":
		c.send(commandReply("-ERR not controlling a session"))
	default:
		c.send(commandReply("-ERR command not found"))
	}
	return true
}

// sendEvent queues an event frame, or holds it while an api command runs.
func (c *conn) sendEvent(b []byte) {
	c.mu.Lock()
	if c.busy {
		c.held = append(c.held, b)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.send(b)
}

// setBusy marks an api command running or done; when done, held events are
// flushed in order.
func (c *conn) setBusy(on bool) {
	c.mu.Lock()
	c.busy = on
	held := c.held
	c.held = nil
	c.mu.Unlock()
	for _, b := range held {
		c.send(b)
	}
}

func (c *conn) isAuthed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.authed
}

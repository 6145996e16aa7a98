package fakefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Options configures a fake FreeSWITCH node.
type Options struct {
	// Password is the event socket password (default "ClueCon").
	Password string
	// Hostname is the switchname written in FreeSWITCH-Hostname and
	// FreeSWITCH-Switchname (default "fs1").
	Hostname string
	// CoreUUID identifies this FreeSWITCH process (default: a random UUID).
	CoreUUID string
	// IPv4 is written in FreeSWITCH-IPv4 (default "127.0.0.1").
	IPv4 string
	// RingDelay is how long an originated leg rings before it answers
	// (default 0, so tests are fast).
	RingDelay time.Duration
	// JobDelay delays each BACKGROUND_JOB event after its bgapi reply
	// (default 10ms): eslgo clients register per-job listeners only after
	// they read the reply, and a job event that comes first is lost to them.
	JobDelay time.Duration
	// XMLCurlURL, when set, is the mod_xml_curl URL (Switchboard's /fs/xml)
	// the fake fetches dialplans from: loopback originates and the
	// destinations they run are then routed like mod_dialplan_xml routes
	// them, with the channel's own variables, and refused or failed as the
	// dialplan says. Without it those legs simply answer.
	XMLCurlURL string
	// Logger receives debug logs (default: discard).
	Logger *slog.Logger
}

// Server is one fake FreeSWITCH node listening for inbound ESL connections.
type Server struct {
	opts Options

	mu       sync.Mutex
	ln       net.Listener
	addr     string
	conns    map[int]*conn
	nextConn int
	seq      uint64
	// Event-Date-Local and -GMT of second dateSec (see datesLocked).
	dateSec   int64
	dateLocal string
	dateGMT   string
	hdrBuf    []Header // reused by emitChannelLocked
	commands  []recorded
	cmdNotify chan struct{}
	channels  map[string]*Channel
	chanSeq   uint64
	sessions  uint64
	failNext  []string
	limits    map[string]int // mod_hash's usage per realm_resource (limit.go)
	replies   []scripted
	coreUUID  string
	xmlCurl   string
	cc        callcenter               // mod_callcenter's state (callcenter.go)
	gateways  map[string]*sofiaGateway // mod_sofia's gateways by name (sofia.go)
	vm        []VMMessage              // mod_voicemail's voicemail_msgs (voicemail.go)
	sent      []SentEvent              // events fired by clients with sendevent
	wg        sync.WaitGroup
}

type recorded struct {
	line     string
	consumed bool
}

type scripted struct {
	prefix string
	body   string
}

// New returns a fake node configured by opts; call Start to listen.
func New(opts Options) *Server {
	if opts.Password == "" {
		opts.Password = "ClueCon"
	}
	if opts.Hostname == "" {
		opts.Hostname = "fs1"
	}
	if opts.CoreUUID == "" {
		opts.CoreUUID = uuid.NewString()
	}
	if opts.IPv4 == "" {
		opts.IPv4 = "127.0.0.1"
	}
	if opts.JobDelay == 0 {
		opts.JobDelay = 10 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Server{
		opts:      opts,
		coreUUID:  opts.CoreUUID,
		xmlCurl:   opts.XMLCurlURL,
		conns:     make(map[int]*conn),
		cmdNotify: make(chan struct{}),
		channels:  make(map[string]*Channel),
		gateways:  make(map[string]*sofiaGateway),
	}
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves
// connections in the background.
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fakefs listen %s: %w", addr, err)
	}
	s.mu.Lock()
	if s.ln != nil {
		s.mu.Unlock()
		_ = ln.Close()
		return errors.New("fakefs start: already listening")
	}
	s.ln = ln
	s.addr = ln.Addr().String()
	s.mu.Unlock()
	s.wg.Add(1)
	go s.acceptLoop(ln)
	return nil
}

// Restart listens again on the address of the last Start after a Close. It
// keeps channels and the event sequence, like an event socket that went
// away and came back; for a fresh FreeSWITCH process use New and Start
// with the same address instead.
func (s *Server) Restart() error {
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	if addr == "" {
		return errors.New("fakefs restart: never started")
	}
	return s.Start(addr)
}

// CoreUUID returns the Core-UUID of the running fake process; it changes
// with every Crash.
func (s *Server) CoreUUID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.coreUUID
}

// SetXMLCurlURL sets (or with "" clears) Options.XMLCurlURL, for tests that
// start Switchboard after the fake.
func (s *Server) SetXMLCurlURL(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.xmlCurl = u
}

func (s *Server) xmlCurlURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.xmlCurl
}

// Crash stops the fake the way a killed FreeSWITCH stops: the listener and
// every connection close with no notice, and all channels vanish without
// events. Restart then starts a new process on the same address: a new
// Core-UUID, Event-Sequence from 1, no channels.
func (s *Server) Crash() {
	s.mu.Lock()
	ln := s.ln
	s.ln = nil
	s.channels = make(map[string]*Channel)
	s.seq = 0
	s.coreUUID = uuid.NewString()
	s.failNext = nil
	s.limits = nil
	s.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	s.DropConnections()
	s.wg.Wait()
}

// Addr returns the listening address (host:port).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Close stops listening and closes every connection after sending the
// shutdown notice ("The system is being shut down.").
func (s *Server) Close() error {
	s.mu.Lock()
	ln := s.ln
	s.ln = nil
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var err error
	if ln != nil {
		err = ln.Close()
	}
	for _, c := range conns {
		c.closeAfter(disconnectNotice(shutdownText))
	}
	for _, c := range conns {
		c.waitClosed(time.Second)
	}
	s.wg.Wait()
	return err
}

// DropConnections closes every client socket abruptly, with no disconnect
// notice, as a crash or network failure would.
func (s *Server) DropConnections() {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.kill()
	}
}

// InjectRaw writes data as-is to every authenticated connection, for
// testing how clients cope with unexpected frames (e.g. a log/data message
// that stops eslgo's reader).
func (s *Server) InjectRaw(data []byte) {
	if len(data) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		if c.isAuthed() {
			c.send(data)
		}
	}
}

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.ln != ln {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.nextConn++
		c := newConn(s, s.nextConn, nc)
		s.conns[c.id] = c
		s.mu.Unlock()
		s.opts.Logger.Debug("fakefs accepted", "conn", c.id, "remote", nc.RemoteAddr().String())
		go c.serve()
	}
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns[c.id] == c {
		delete(s.conns, c.id)
	}
}

// record stores a received command line and wakes WaitCommand callers.
func (s *Server) record(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = append(s.commands, recorded{line: line})
	close(s.cmdNotify)
	s.cmdNotify = make(chan struct{})
}

// Commands returns every command line received so far, on all connections,
// in arrival order: the command segment of each, as read_packet cuts it
// (up to the first CR of the message, else its first LF; see readCommand).
// eslgo leaves a trailing space on "api status ".
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.commands))
	for i, r := range s.commands {
		out[i] = r.line
	}
	return out
}

// WaitCommand returns the oldest received command line that starts with
// prefix and that no earlier WaitCommand call returned, waiting for one
// until ctx ends. Successive calls thus return successive matches.
func (s *Server) WaitCommand(ctx context.Context, prefix string) (string, error) {
	for {
		s.mu.Lock()
		for i := range s.commands {
			r := &s.commands[i]
			if !r.consumed && strings.HasPrefix(r.line, prefix) {
				r.consumed = true
				s.mu.Unlock()
				return r.line, nil
			}
		}
		notify := s.cmdNotify
		s.mu.Unlock()
		select {
		case <-notify:
		case <-ctx.Done():
			return "", fmt.Errorf("fakefs wait for command %q: %w", prefix, ctx.Err())
		}
	}
}

// ConnInfo describes one client connection, for assertions about who is
// subscribed to what.
type ConnInfo struct {
	ID     int
	Remote string
	Authed bool
	// Format is the event format asked for ("plain", "json"), "" if none.
	Format string
	// Events lists the subscribed event names in upper case, sorted; "ALL"
	// when everything was asked for.
	Events []string
}

// Conns returns the live connections ordered by ID.
func (s *Server) Conns() []ConnInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ConnInfo, 0, len(s.conns))
	for id := 1; id <= s.nextConn; id++ {
		if c, ok := s.conns[id]; ok {
			out = append(out, c.info())
		}
	}
	return out
}

// SetOriginateResult makes the next originate fail with cause (e.g.
// "USER_BUSY"): the A leg is created, rings and hangs up with that cause,
// and the reply is "-ERR <cause>\n". Calls queue up, one per originate.
func (s *Server) SetOriginateResult(cause string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = append(s.failNext, cause)
}

// SetAPIReply makes every api or bgapi command whose text (after "api " or
// "bgapi ") starts with prefix answer body instead of the built-in
// behaviour. The newest matching prefix wins; ClearAPIReplies removes all.
func (s *Server) SetAPIReply(prefix, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, scripted{prefix: prefix, body: body})
}

// ClearAPIReplies removes every reply set by SetAPIReply.
func (s *Server) ClearAPIReplies() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = nil
}

func (s *Server) scriptedReply(cmdline string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.replies) - 1; i >= 0; i-- {
		if strings.HasPrefix(cmdline, s.replies[i].prefix) {
			return s.replies[i].body, true
		}
	}
	return "", false
}

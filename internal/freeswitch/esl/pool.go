package esl

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchboard/switchboard/internal/freeswitch/command"
)

// subscribeLine is the one subscription of an event connection: the channel
// lifecycle the tracker needs, recordings, job results, the dialplan's
// feature-code events (CUSTOM switchboard::feature), mod_voicemail's
// MESSAGE_WAITING (shared mailboxes' lights, package mwi), trunk
// registration states and their loading and removal (CUSTOM
// sofia::gateway_state, sofia::gateway_add, sofia::gateway_delete) and mod_hash's limit
// counts (CUSTOM limit::usage: trunks and tenants at capacity), nothing
// more. CUSTOM comes last: mod_event_socket reads every word after it as a
// subclass.
const subscribeLine = "event plain CHANNEL_CREATE CHANNEL_PROGRESS CHANNEL_PROGRESS_MEDIA CHANNEL_ANSWER " +
	"CHANNEL_BRIDGE CHANNEL_UNBRIDGE CHANNEL_HOLD CHANNEL_UNHOLD CHANNEL_HANGUP_COMPLETE " +
	"RECORD_START RECORD_STOP BACKGROUND_JOB MESSAGE_WAITING CUSTOM " + FeatureSubclass + " " + GatewayStateSubclass + " " + GatewayAddSubclass + " " + GatewayDeleteSubclass + " " + LimitUsageSubclass

// LimitUsageSubclass is the subclass of the CUSTOM events FreeSWITCH fires
// on every successful limit increment (switch_limit_fire_event: headers
// backend, realm, key, usage after the increment, rate, max, ratemax); an
// attempt over the maximum fires nothing.
const LimitUsageSubclass = "limit::usage"

// GatewayStateSubclass is the subclass of the CUSTOM events mod_sofia fires
// when a gateway's (trunk's) registration state changes (headers Gateway,
// State, Ping-Status, and Status and Phrase when a SIP answer caused it).
const GatewayStateSubclass = "sofia::gateway_state"

// GatewayAddSubclass and GatewayDeleteSubclass are the CUSTOM events
// mod_sofia fires when a gateway is loaded on a profile and when a killed
// gateway is finally removed (headers Gateway, profile-name).
const (
	GatewayAddSubclass    = "sofia::gateway_add"
	GatewayDeleteSubclass = "sofia::gateway_delete"
)

// FeatureSubclass is the subclass of the CUSTOM events the dialplan fires
// when a feature code runs (dialplan's featureEvent).
const FeatureSubclass = "switchboard::feature"

// PoolOptions configures a Pool. Zero values select the defaults.
type PoolOptions struct {
	Logger *slog.Logger
	// OnEvent receives every event of the nodes whose event stream this
	// replica holds, plus the BACKGROUND_JOB of its own BgAPI calls. It is
	// called from one goroutine per node, in Event-Sequence order, and
	// should not block for long.
	OnEvent func(Event)
	// OnConnect is called after each (re)connect of a node's event
	// connection, once subscribed, so the caller can resync (e.g. from
	// "show channels as json" through API). The node's events are held back
	// until it returns, so it must be bounded (use ctx with a timeout).
	OnConnect func(ctx context.Context, node string)
	// OnNodeState, when set, hears whether a node's event connection is
	// up (subscribed) or down (lost, or a connect attempt failed; cause
	// says why), from the replica consuming the node's events. It is called
	// on every attempt: the receiver keeps only the changes. A lease handed
	// over between replicas is no state change and is not reported.
	OnNodeState func(ctx context.Context, node string, up bool, cause error)
	// EventLease, when set, limits event consumption to the nodes whose
	// lease this replica holds. Without it this replica consumes every node.
	EventLease *RedisLease
	// BackoffBase and BackoffMax bound the capped exponential reconnect
	// delay, jittered between half and all of it (defaults 200ms and 10s).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// DialTimeout bounds TCP connect plus authentication (default 5s).
	DialTimeout time.Duration
	// HealthInterval is how often an idle connection is probed with
	// "api status"; HealthTimeout bounds the probe (defaults 5s and 2s).
	// eslgo's reader dies silently on an unexpected frame, so only a probe
	// finds such a connection.
	HealthInterval time.Duration
	HealthTimeout  time.Duration
	// ReorderWindow is how long events are held to restore Event-Sequence
	// order (default 20ms; negative delivers at once).
	ReorderWindow time.Duration
}

func (o *PoolOptions) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 200 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 10 * time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = 5 * time.Second
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = 2 * time.Second
	}
	switch {
	case o.ReorderWindow == 0:
		o.ReorderWindow = 20 * time.Millisecond
	case o.ReorderWindow < 0:
		o.ReorderWindow = 0
	}
}

// Pool holds a command connection to every FreeSWITCH node, and an event
// connection to each node whose event stream this replica consumes. It
// reconnects by itself; Run drives it. SetNodes changes the node list while
// it runs.
type Pool struct {
	opts PoolOptions

	mu     sync.Mutex
	nodes  []*node
	byName map[string]*node
	runCtx context.Context // set by Run; nil before
	wg     sync.WaitGroup
}

// NewPool returns a pool for nodes; nothing connects before Run.
func NewPool(nodes []NodeConfig, opts PoolOptions) *Pool {
	opts.defaults()
	p := &Pool{opts: opts, byName: make(map[string]*node, len(nodes))}
	for _, cfg := range nodes {
		n := p.newNode(cfg)
		p.nodes = append(p.nodes, n)
		p.byName[cfg.Name] = n
	}
	return p
}

func (p *Pool) newNode(cfg NodeConfig) *node {
	return &node{
		cfg:  cfg,
		p:    p,
		log:  p.opts.Logger.With("node", cfg.Name, "addr", cfg.Addr),
		disp: newDispatcher(p.opts.OnEvent, p.opts.ReorderWindow),
		sem:  make(chan struct{}, 1),
	}
}

// start runs n's loops until ctx or n's own stop. Caller holds p.mu.
func (p *Pool) startLocked(ctx context.Context, n *node) {
	nctx, cancel := context.WithCancel(ctx)
	n.stop = cancel
	p.wg.Add(3)
	go func() { defer p.wg.Done(); n.disp.run(nctx) }()
	go func() { defer p.wg.Done(); n.commandLoop(nctx) }()
	go func() { defer p.wg.Done(); n.eventLoop(nctx) }()
}

// Run connects to every node and keeps reconnecting until ctx ends; then
// it closes the connections, releases held leases and returns nil.
func (p *Pool) Run(ctx context.Context) error {
	p.mu.Lock()
	p.runCtx = ctx
	for _, n := range p.nodes {
		p.startLocked(ctx, n)
	}
	p.mu.Unlock()
	<-ctx.Done() // with no nodes, still run until told to stop
	p.wg.Wait()
	return nil
}

// SetNodes makes the pool's nodes exactly nodes, without a restart: new
// names are connected, names no longer listed are disconnected (their
// event leases released), and a node whose address or password changed is
// reconnected. It reports how many nodes were added and removed.
func (p *Pool) SetNodes(nodes []NodeConfig) (added, removed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	want := make(map[string]NodeConfig, len(nodes))
	for _, cfg := range nodes {
		want[cfg.Name] = cfg
	}
	kept := p.nodes[:0:0]
	for _, n := range p.nodes {
		if cfg, ok := want[n.cfg.Name]; ok && cfg == n.cfg {
			kept = append(kept, n)
			continue
		}
		if n.stop != nil {
			n.stop()
		}
		delete(p.byName, n.cfg.Name)
		n.log.Info("esl node removed")
		removed++
	}
	p.nodes = kept
	for _, cfg := range nodes {
		if _, ok := p.byName[cfg.Name]; ok {
			continue
		}
		n := p.newNode(cfg)
		p.nodes = append(p.nodes, n)
		p.byName[cfg.Name] = n
		if p.runCtx != nil && p.runCtx.Err() == nil {
			p.startLocked(p.runCtx, n)
		}
		n.log.Info("esl node added")
		added++
	}
	return added, removed
}

func (p *Pool) node(name string) (*node, error) {
	p.mu.Lock()
	n, ok := p.byName[name]
	p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("esl node %q: %w", name, ErrUnknownNode)
	}
	return n, nil
}

func (p *Pool) list() []*node {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*node(nil), p.nodes...)
}

// API runs "api <cmd>" on node's command connection and returns the body.
// A body starting with -ERR or -USAGE becomes a *CommandError. A down node
// fails at once with ErrNodeDown. Commands on one node run one at a time,
// as FreeSWITCH runs them; a command whose ctx ends before its reply makes
// the pool reconnect, because the reply would otherwise answer the next
// command. Commands come only from the command package's builders.
func (p *Pool) API(ctx context.Context, node string, cmd command.Command) (string, error) {
	return p.api(ctx, node, cmd.String())
}

// api is API for a command line (the pool's own tests send lines no
// builder makes, to check the pool refuses them).
func (p *Pool) api(ctx context.Context, node, cmd string) (string, error) {
	n, err := p.node(node)
	if err != nil {
		return "", err
	}
	if err := checkLine(cmd); err != nil {
		return "", err
	}
	r, err := n.send(ctx, "api "+cmd)
	if err != nil {
		return "", err
	}
	body := string(r.Body)
	if isFailure(body) {
		return "", &CommandError{Node: node, Command: "api " + cmd, Reply: body}
	}
	return body, nil
}

// BgAPI runs "bgapi <cmd>" on node and returns the Job-UUID at once; the
// result arrives later as a BACKGROUND_JOB event through OnEvent, on this
// replica whether or not it holds the node's event lease. Use it for
// originate, which blocks the connection until answered if run with API.
func (p *Pool) BgAPI(ctx context.Context, node string, cmd command.Command) (string, error) {
	return p.bgapi(ctx, node, cmd.String())
}

// bgapi is BgAPI for a command line.
func (p *Pool) bgapi(ctx context.Context, node, cmd string) (string, error) {
	n, err := p.node(node)
	if err != nil {
		return "", err
	}
	if err := checkLine(cmd); err != nil {
		return "", err
	}
	job := uuid.NewString()
	n.disp.expectJob(job)
	// All-CRLF framing: mod_event_socket ends the command at the first CR
	// of the message, and eslgo ends every message with CRLF CRLF, so a bare
	// LF here would make the header part of the command's arguments.
	r, err := n.send(ctx, "bgapi "+cmd+"\r\nJob-UUID: "+job)
	if err != nil {
		n.disp.forgetJob(job)
		return "", err
	}
	reply := r.GetReply()
	if !strings.HasPrefix(reply, "+OK") {
		n.disp.forgetJob(job)
		return "", &CommandError{Node: node, Command: "bgapi " + cmd, Reply: reply}
	}
	if got := r.GetHeader("Job-UUID"); got != job {
		// The switch did not take the header: the result would be
		// announced under an id nobody waits for.
		n.disp.forgetJob(job)
		return "", &CommandError{Node: node, Command: "bgapi " + cmd, Reply: "Job-UUID not honoured: " + reply}
	}
	return job, nil
}

// SendEvent fires an event on node (see command.SendEvent). The switch
// answers "+OK <Event-UUID>" whatever the event; anything else is a
// *CommandError.
func (p *Pool) SendEvent(ctx context.Context, node string, ev command.Event) error {
	n, err := p.node(node)
	if err != nil {
		return err
	}
	r, err := n.send(ctx, ev.String())
	if err != nil {
		return err
	}
	if reply := r.GetReply(); !strings.HasPrefix(reply, "+OK") {
		return &CommandError{Node: node, Command: ev.Label(), Reply: reply}
	}
	return nil
}

func checkLine(cmd string) error {
	if strings.TrimSpace(cmd) == "" {
		return fmt.Errorf("esl command: empty")
	}
	if strings.ContainsAny(cmd, "\r\n") {
		return fmt.Errorf("esl command %q: contains a line break", verb(cmd))
	}
	return nil
}

func isFailure(body string) bool {
	return strings.HasPrefix(body, "-ERR") || strings.HasPrefix(body, "-USAGE")
}

// Commander is what the node subscribers (queues, gateways, voicemail)
// need of the pool: the nodes and their state, and API commands to one of
// them. *Pool is one; tests give a fake that records what it is sent.
type Commander interface {
	Nodes() []NodeStatus
	API(ctx context.Context, node string, cmd command.Command) (string, error)
}

// UpNodes names the nodes of c whose command connection is up.
func UpNodes(c Commander) []string {
	var up []string
	for _, n := range c.Nodes() {
		if n.Up {
			up = append(up, n.Name)
		}
	}
	return up
}

// NodeStatus is a node's connection state for health checks and /readyz.
type NodeStatus struct {
	Name string
	Addr string
	// Up is true while the command connection is usable.
	Up bool
	// Since is when Up last changed (zero before the first attempt ends).
	Since time.Time
	// EventsHeld is true while this replica consumes the node's events.
	EventsHeld bool
	// LastEvent is when this replica last received an event of the node
	// (zero when never).
	LastEvent time.Time
}

// Nodes returns every node's status in configuration order.
func (p *Pool) Nodes() []NodeStatus {
	nodes := p.list()
	out := make([]NodeStatus, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.status())
	}
	return out
}

// AnyUp reports whether at least one node's command connection is up.
func (p *Pool) AnyUp() bool {
	_, ok := p.FirstUp()
	return ok
}

// FirstUp returns the first node, in configuration order, whose command
// connection is up: where new originates go.
func (p *Pool) FirstUp() (string, bool) {
	for _, n := range p.list() {
		if n.status().Up {
			return n.cfg.Name, true
		}
	}
	return "", false
}

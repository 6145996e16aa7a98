// Package mwi lights the message-waiting lamps of a special mailbox's
// notify_extensions (resources.md §2.14). mod_voicemail reports every change
// of a box's inbox with a MESSAGE_WAITING event for the box's own account
// ("<number>-<tenant>@<domain>", which no phone registers); for a special
// mailbox this package fires the same counts over the event socket as a
// MESSAGE_WAITING event per notify extension ("<ext>-<tenant>@<domain>"),
// which sofia turns into a NOTIFY to that extension's phones.
package mwi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/models"
)

// SourceHeader marks the events this package fires, so their echo (every
// listener, this one included, receives a fired MESSAGE_WAITING) is never
// taken for a mailbox's own report.
const SourceHeader = "sb_mwi_mailbox"

// Sender fires an event on a node (esl.Pool.SendEvent).
type Sender interface {
	SendEvent(ctx context.Context, node string, ev command.Event) error
}

// Notifier forwards mailbox reports to the notify extensions.
type Notifier struct {
	st     *models.Store
	send   Sender
	domain string
	nodes  func() []string
	log    *slog.Logger
}

// New returns a Notifier firing on every node nodes returns (phones of
// one tenant may register on any node).
func New(st *models.Store, send Sender, domain string, nodes func() []string, log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.Default()
	}
	return &Notifier{st: st, send: send, domain: domain, nodes: nodes, log: log}
}

// IsMailboxReport reports whether e is mod_voicemail's MESSAGE_WAITING
// (not one this package fired).
func IsMailboxReport(e esl.Event) bool {
	return e.Name() == "MESSAGE_WAITING" && e.Get(SourceHeader) == "" && e.Get("MWI-Message-Account") != ""
}

// boxAccount is "<number>-<tenant>@<domain>" (a tenant name has no '-').
var boxAccount = regexp.MustCompile(`^([0-9]{1,15})-([A-Za-z0-9_]{2,32})@([^@\s]+)$`)

// voiceMessage is the count header's shape: "new/saved" with the optional
// " (urgent new/urgent saved)".
var voiceMessage = regexp.MustCompile(`^[0-9]{1,9}/[0-9]{1,9}( \([0-9]{1,9}/[0-9]{1,9}\))?$`)

// ErrNotMailbox is a report for an account that is no enabled special
// mailbox of ours (an extension's own box, another domain): nothing sent.
var ErrNotMailbox = errors.New("not a special mailbox")

// Forward sends e's counts to each notify extension of its mailbox and
// returns how many extensions were notified.
func (n *Notifier) Forward(ctx context.Context, e esl.Event) (int, error) {
	if !IsMailboxReport(e) {
		return 0, nil
	}
	m := boxAccount.FindStringSubmatch(e.Get("MWI-Message-Account"))
	if m == nil || !strings.EqualFold(m[3], n.domain) {
		return 0, ErrNotMailbox
	}
	number, tenant := m[1], m[2]
	waiting := e.Get("MWI-Messages-Waiting")
	if waiting != "yes" && waiting != "no" {
		return 0, fmt.Errorf("mailbox %s-%s: MWI-Messages-Waiting %q", number, tenant, waiting)
	}
	counts := e.Get("MWI-Voice-Message")
	if !voiceMessage.MatchString(counts) {
		return 0, fmt.Errorf("mailbox %s-%s: MWI-Voice-Message %q", number, tenant, counts)
	}
	o, err := n.st.Tenant(ctx, tenant)
	if errors.Is(err, models.ErrNotFound) {
		return 0, ErrNotMailbox
	}
	if err != nil {
		return 0, fmt.Errorf("mailbox %s-%s: %w", number, tenant, err)
	}
	recs, err := n.st.Records(ctx, n.st.Registry().Resource("special_mailboxes"), o, map[string]any{"number": number})
	if err != nil {
		return 0, fmt.Errorf("mailbox %s-%s: %w", number, tenant, err)
	}
	if len(recs) == 0 || recs[0]["enabled"] != true {
		return 0, ErrNotMailbox
	}
	exts := notifyExtensions(recs[0]["notify_extensions"])
	var errs []error
	for _, ext := range exts {
		headers := [][2]string{
			{"MWI-Messages-Waiting", waiting},
			{"MWI-Message-Account", naming.UserID(tenant, ext) + "@" + n.domain},
			{"MWI-Voice-Message", counts},
			{SourceHeader, number},
		}
		ev, err := command.SendEvent("MESSAGE_WAITING", headers)
		if err != nil {
			errs = append(errs, fmt.Errorf("extension %s: %w", ext, err))
			continue
		}
		for _, node := range n.nodes() {
			if err := n.send.SendEvent(ctx, node, ev); err != nil {
				errs = append(errs, fmt.Errorf("extension %s on %s: %w", ext, node, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("mailbox %s-%s message waiting: %w", number, tenant, err)
	}
	n.log.Debug("mailbox message waiting forwarded", "tenant", tenant, "mailbox", number, "extensions", len(exts))
	return len(exts), nil
}

// notifyExtensions reads the stored list, keeping only numbers (the model
// validates them; nothing else can reach an event header).
func notifyExtensions(v any) []string {
	var out []string
	add := func(s string) {
		if s != "" && strings.Trim(s, "0123456789") == "" && len(s) <= 15 {
			out = append(out, s)
		}
	}
	switch l := v.(type) {
	case []string:
		for _, s := range l {
			add(s)
		}
	case []any:
		for _, s := range l {
			if s, ok := s.(string); ok {
				add(s)
			}
		}
	}
	return out
}

// Run forwards the mailbox reports arriving on in, in arrival order, until
// ctx ends. A lost one leaves a lamp stale until the box's next change, so
// a failure is logged.
func (n *Notifier) Run(ctx context.Context, in <-chan esl.Event) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-in:
			if _, err := n.Forward(ctx, e); err != nil && !errors.Is(err, ErrNotMailbox) {
				n.log.Warn("mailbox message waiting not forwarded", "node", e.Node, "error", err)
			}
		}
	}
}

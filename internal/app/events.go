package app

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/calls"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/freeswitch/features"
	"github.com/switchboard/switchboard/internal/freeswitch/gateways/gwstate"
	"github.com/switchboard/switchboard/internal/freeswitch/mwi"
	"github.com/switchboard/switchboard/internal/freeswitch/nodehealth"
	"github.com/switchboard/switchboard/internal/platform/metrics"
)

// eventRouter hands each event of the FreeSWITCH nodes to the part that
// owns it. It runs on the pool's event reader, so nothing here may block
// for long: node-health writes take a bounded time, and the slower
// consumers (channel state, feature codes, message waiting) read from
// their own queues in arrival order.
type eventRouter struct {
	ctx     context.Context // ends when live calls stop
	log     *slog.Logger
	metrics *metrics.Metrics
	tracker *calls.Tracker
	health  *nodehealth.Watcher
	// gateways keeps the trunks' live gateway state; askGateway reads one
	// gateway's status from its node (a gateway_add says nothing more).
	gateways   *gwstate.Store
	askGateway func(ctx context.Context, node, gateway string) (string, error)

	calls     chan<- esl.Event // channel state, for the tracker
	features  chan<- esl.Event // feature codes, for features.Applier
	mailboxes chan<- esl.Event // mod_voicemail's MESSAGE_WAITING, for mwi.Notifier
}

func (r *eventRouter) route(e esl.Event) {
	r.metrics.ESLEvent(e.Node)
	// Callback calls follow their legs' events (and their originate's
	// result) before the channels are updated.
	r.bounded(2*time.Second, func(ctx context.Context) {
		if err := r.tracker.CallEvent(ctx, e); err != nil {
			r.log.Warn("callback call state", "error", err)
		}
	})
	switch {
	case e.Name() == "BACKGROUND_JOB":
		r.logJob(e)
	case gwstate.Is(e):
		r.bounded(5*time.Second, func(ctx context.Context) { r.gatewayEvent(ctx, e) })
	case nodehealth.IsLimitUsage(e):
		r.bounded(5*time.Second, func(ctx context.Context) { r.health.LimitUsage(ctx, e) })
	case mwi.IsMailboxReport(e):
		r.enqueue(r.mailboxes, e)
	case features.IsFeatureEvent(e):
		r.enqueue(r.features, e)
	default:
		r.enqueue(r.calls, e)
	}
}

// gatewayEvent hands mod_sofia's gateway events to the live gateway
// state and, for state changes, to the trunk registration system events.
func (r *eventRouter) gatewayEvent(ctx context.Context, e esl.Event) {
	if nodehealth.IsGatewayState(e) {
		r.health.GatewayState(ctx, e)
	}
	if err := r.gateways.Apply(ctx, e, r.askGateway); err != nil {
		r.log.Warn("gateway state", "node", e.Node, "gateway", e.Get("Gateway"), "error", err)
	}
}

// bounded runs fn with a context that ends after d or when live calls stop.
func (r *eventRouter) bounded(d time.Duration, fn func(context.Context)) {
	ctx, cancel := context.WithTimeout(r.ctx, d)
	defer cancel()
	fn(ctx)
}

// enqueue waits for room in q: events are never dropped while live calls run.
func (r *eventRouter) enqueue(q chan<- esl.Event, e esl.Event) {
	select {
	case q <- e:
	case <-r.ctx.Done():
	}
}

// logJob reports originates FreeSWITCH refused; the call's channel events
// and CDR carry the rest.
func (r *eventRouter) logJob(e esl.Event) {
	if strings.HasPrefix(e.Body, "-") {
		r.log.Info("background job failed", "node", e.Node, "job", e.Get("Job-UUID"),
			"command", e.Get("Job-Command"), "reply", strings.TrimSpace(e.Body))
	}
}

package app

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard/switchboard/internal/changes/outbox"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/platform/metrics"
)

// registerPoolMetrics exposes each FreeSWITCH node's state and the
// tracker's queue, read at scrape time.
func registerPoolMetrics(m *metrics.Metrics, pool *esl.Pool, events chan esl.Event, log *slog.Logger) {
	err := m.Register(&poolCollector{pool: pool})
	if err == nil {
		err = m.GaugeFunc("switchboard_calls_tracker_queue", "FreeSWITCH events received and not yet taken by the call tracker.",
			nil, func() float64 { return float64(len(events)) })
	}
	if err != nil {
		log.Warn("event socket metrics not registered", "error", err)
	}
}

var (
	nodeUpDesc = prometheus.NewDesc("switchboard_esl_node_up",
		"1 while the node's event-socket command connection is up.", []string{"node"}, nil)
	nodeEventsDesc = prometheus.NewDesc("switchboard_esl_node_events_held",
		"1 while this replica holds the node's event lease (consumes its events).", []string{"node"}, nil)
)

// poolCollector reports every configured node, up or down.
type poolCollector struct{ pool *esl.Pool }

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nodeUpDesc
	ch <- nodeEventsDesc
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, n := range c.pool.Nodes() {
		ch <- prometheus.MustNewConstMetric(nodeUpDesc, prometheus.GaugeValue, b2f(n.Up), n.Name)
		ch <- prometheus.MustNewConstMetric(nodeEventsDesc, prometheus.GaugeValue, b2f(n.EventsHeld), n.Name)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// measureLag hands events to the tracker one at a time and records, as
// each is taken, how long ago FreeSWITCH stamped it: the tracker's lag.
func measureLag(ctx context.Context, in <-chan esl.Event, m *metrics.Metrics) <-chan esl.Event {
	out := make(chan esl.Event)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- e:
				case <-ctx.Done():
					return
				}
				if us, err := strconv.ParseInt(e.Get("Event-Date-Timestamp"), 10, 64); err == nil {
					m.TrackerLag(time.Since(time.UnixMicro(us)))
				}
			}
		}
	}()
	return out
}

// registerOutboxMetrics exposes the outbox depth: committed configuration
// changes some subscriber has not handled yet (growing: a subscriber is
// stuck, e.g. Redis or FreeSWITCH unreachable).
func registerOutboxMetrics(m *metrics.Metrics, d *outbox.Dispatcher, log *slog.Logger) {
	if d == nil {
		return
	}
	err := m.GaugeFunc("switchboard_outbox_depth", "Committed configuration changes the slowest subscriber has not handled yet (NaN: the database did not answer).",
		nil, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := d.Depth(ctx)
			if err != nil {
				return math.NaN()
			}
			return float64(n)
		})
	if err != nil {
		log.Warn("outbox metric not registered", "error", err)
	}
}

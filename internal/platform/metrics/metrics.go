// Package metrics holds Switchboard's Prometheus metrics: HTTP requests,
// FreeSWITCH XML fetches, the event socket, the call tracker, SSE
// subscribers and the Go runtime, on one registry served at /metrics.
// Every method is safe on a nil *Metrics, so parts wired without metrics
// (tests, tools) need no guard.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the process's metric set.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	xmlFetches   *prometheus.CounterVec
	xmlDuration  *prometheus.HistogramVec
	eslEvents    *prometheus.CounterVec
	trackerLag   prometheus.Histogram
	sse          prometheus.Gauge
	passwords    prometheus.Counter
}

// New builds the metric set with the Go runtime and process collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_http_requests_total",
			Help: "HTTP requests by method, declared route pattern and status.",
		}, []string{"method", "route", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchboard_http_request_duration_seconds",
			Help:    "HTTP request latency by method and declared route pattern.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route"}),
		xmlFetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_fsxml_fetches_total",
			Help: "mod_xml_curl fetches by section and the cache tier that answered (memory, render, none).",
		}, []string{"section", "tier"}),
		xmlDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchboard_fsxml_fetch_duration_seconds",
			Help:    "mod_xml_curl fetch latency by section and cache tier.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"section", "tier"}),
		eslEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_esl_events_total",
			Help: "FreeSWITCH events received on the event socket, by node (rate() gives events per second).",
		}, []string{"node"}),
		trackerLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "switchboard_calls_tracker_lag_seconds",
			Help:    "Age of a FreeSWITCH event (its Event-Date-Timestamp) when the call tracker takes it.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		sse: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "switchboard_sse_subscribers",
			Help: "Open Server-Sent Events streams (/api/telephony/events).",
		}),
		passwords: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_password_checks_total",
			Help: "Administrator password (bcrypt) comparisons: sign-ins, Basic requests not answered from the cache, unknown usernames.",
		}),
	}
	reg.MustRegister(m.httpRequests, m.httpDuration, m.xmlFetches, m.xmlDuration, m.eslEvents, m.trackerLag, m.sse, m.passwords,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Register adds a collector (e.g. gauges read from a component at scrape time).
func (m *Metrics) Register(c prometheus.Collector) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(c)
}

// ObserveHTTP counts one HTTP request.
func (m *Metrics) ObserveHTTP(method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(method, route).Observe(d.Seconds())
}

// ObserveXMLFetch counts one mod_xml_curl fetch.
func (m *Metrics) ObserveXMLFetch(section, tier string, d time.Duration) {
	if m == nil {
		return
	}
	switch section {
	case "directory", "dialplan", "configuration":
	default:
		section = "other" // caller-controlled: keep the label set bounded
	}
	if tier == "" {
		tier = "error"
	}
	m.xmlFetches.WithLabelValues(section, tier).Inc()
	m.xmlDuration.WithLabelValues(section, tier).Observe(d.Seconds())
}

// PasswordCheck counts one bcrypt comparison of an administrator password.
func (m *Metrics) PasswordCheck() {
	if m == nil {
		return
	}
	m.passwords.Inc()
}

// ESLEvent counts one event from a node.
func (m *Metrics) ESLEvent(node string) {
	if m == nil {
		return
	}
	m.eslEvents.WithLabelValues(node).Inc()
}

// TrackerLag records how old an event was when the tracker took it.
func (m *Metrics) TrackerLag(d time.Duration) {
	if m == nil || d < 0 {
		return
	}
	m.trackerLag.Observe(d.Seconds())
}

// SSEOpened and SSEClosed track open event streams.
func (m *Metrics) SSEOpened() {
	if m != nil {
		m.sse.Inc()
	}
}

// SSEClosed is SSEOpened's pair.
func (m *Metrics) SSEClosed() {
	if m != nil {
		m.sse.Dec()
	}
}

// GaugeFunc registers a gauge read at scrape time (node state, queue and
// outbox depths), labelled by constant labels.
func (m *Metrics) GaugeFunc(name, help string, labels prometheus.Labels, fn func() float64) error {
	return m.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, fn))
}

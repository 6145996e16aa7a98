package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// simCommand runs a fake FreeSWITCH node that keeps placing calls, so
// anyone can point SWITCHBOARD_ESL_NODES at it and watch
// /api/telephony/channels and the event stream move. It ends with ctx
// (SIGTERM/SIGINT), hanging its calls up first.
type simCmd struct {
	Listen         string  `default:"127.0.0.1:8021" help:"Event socket listen address."`
	CallsPerSecond float64 `default:"1" help:"Mean rate of new calls."`
	MeanDuration   float64 `default:"30" help:"Mean call duration in seconds (exponential)."`
	Tenants        string  `default:"acme,globex" help:"Comma-separated tenants the calls belong to."`
	Extensions     string  `default:"1001,1002,1003,1004" help:"Comma-separated extensions the calls use."`
	Password       string  `default:"ClueCon" help:"Event socket password."`
	Hostname       string  `default:"fs1" help:"The fake node's switchname."`
}

func (c simCmd) Run(rc *runCtx) error { return simCommand(rc.ctx, rc.env, c) }

func simCommand(ctx context.Context, env Env, c simCmd) error {
	if c.CallsPerSecond <= 0 || c.MeanDuration <= 0 {
		return fmt.Errorf("%w: --calls-per-second and --mean-duration must be positive", ErrUsage)
	}
	tl, el := splitList(c.Tenants), splitList(c.Extensions)
	if len(tl) == 0 || len(el) == 0 {
		return fmt.Errorf("%w: --tenants and --extensions need at least one value", ErrUsage)
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	srv := fakefs.New(fakefs.Options{Password: c.Password, Hostname: c.Hostname, Logger: log.With("component", "fakefs")})
	if err := srv.Start(c.Listen); err != nil {
		return fmt.Errorf("sim: listen %s: %w", c.Listen, err)
	}
	defer srv.Close()
	log.Info("fake FreeSWITCH listening", "addr", srv.Addr(), "hostname", c.Hostname,
		"calls_per_second", c.CallsPerSecond, "mean_duration_s", c.MeanDuration, "tenants", tl, "extensions", el)
	log.Info("point Switchboard at it", "SWITCHBOARD_ESL_NODES", c.Password+"@"+srv.Addr())
	go simStatus(ctx, srv, log)
	err := fakefs.RunSim(ctx, srv, fakefs.SimOptions{
		CallsPerSecond:      c.CallsPerSecond,
		MeanDurationSeconds: c.MeanDuration,
		Tenants:             tl,
		Extensions:          el,
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("sim: %w", err)
	}
	log.Info("sim stopped", "commands_received", len(srv.Commands()))
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// simStatus logs the live channel count and connected clients every 10 s.
func simStatus(ctx context.Context, srv *fakefs.Server, log *slog.Logger) {
	every(ctx, 10*time.Second, func() {
		log.Info("sim status", "live_channels", len(srv.Channels()), "clients", len(srv.Conns()), "commands_received", len(srv.Commands()))
	})
}

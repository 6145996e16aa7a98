package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard/switchboard/esl/fakefs"
)

// simCommand runs a fake FreeSWITCH node that keeps placing calls, so
// anyone can point SWITCHBOARD_ESL_NODES at it and watch
// /api/telephony/channels and the event stream move. It ends with ctx
// (SIGTERM/SIGINT), hanging its calls up first.
func simCommand(ctx context.Context, env Env, args []string) error {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	listen := fs.String("listen", "127.0.0.1:8021", "event socket listen address")
	cps := fs.Float64("calls-per-second", 1, "mean rate of new calls")
	mean := fs.Float64("mean-duration", 30, "mean call duration in seconds (exponential)")
	tenants := fs.String("tenants", "acme,globex", "comma-separated tenants the calls belong to")
	exts := fs.String("extensions", "1001,1002,1003,1004", "comma-separated extensions the calls use")
	password := fs.String("password", "ClueCon", "event socket password")
	hostname := fs.String("hostname", "fs1", "the fake node's switchname")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if *cps <= 0 || *mean <= 0 {
		return fmt.Errorf("%w: --calls-per-second and --mean-duration must be positive", ErrUsage)
	}
	tl, el := splitList(*tenants), splitList(*exts)
	if len(tl) == 0 || len(el) == 0 {
		return fmt.Errorf("%w: --tenants and --extensions need at least one value", ErrUsage)
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	srv := fakefs.New(fakefs.Options{Password: *password, Hostname: *hostname, Logger: log.With("component", "fakefs")})
	if err := srv.Start(*listen); err != nil {
		return fmt.Errorf("sim: listen %s: %w", *listen, err)
	}
	defer srv.Close()
	log.Info("fake FreeSWITCH listening", "addr", srv.Addr(), "hostname", *hostname,
		"calls_per_second", *cps, "mean_duration_s", *mean, "tenants", tl, "extensions", el)
	log.Info("point Switchboard at it", "SWITCHBOARD_ESL_NODES", *password+"@"+srv.Addr())
	go simStatus(ctx, srv, log)
	err := fakefs.RunSim(ctx, srv, fakefs.SimOptions{
		CallsPerSecond:      *cps,
		MeanDurationSeconds: *mean,
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

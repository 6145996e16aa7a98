// Command sbbench measures Switchboard's hot paths on this machine.
//
//	go run ./cmd/sbbench xml       # FreeSWITCH XML (/fs/xml)
//	go run ./cmd/sbbench tracker   # ESL events into the live-call state
//	go run ./cmd/sbbench call      # POST /api/telephony/call to the originate
//	go run ./cmd/sbbench messaging # POST /api/messaging/send, and the outbox drain
//	go run ./cmd/sbbench chat      # channel messages and agent provisioning against ejabberd
//	go run ./cmd/sbbench cdrimport # a 100,000-row bulk CDR import job
//
// It runs on MySQL and real Redis when SWITCHBOARD_BENCH_MYSQL_URL and
// SWITCHBOARD_BENCH_REDIS_URL (or the SWITCHBOARD_TEST_ ones) are set, else
// on a temporary SQLite file and an in-process Redis-compatible server.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sbbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: sbbench xml|tracker|call|messaging|chat|cdrimport")
	}
	switch args[0] {
	case "xml":
		return benchXML(ctx, args[1:])
	case "xml-server":
		return serveXML(ctx, args[1:])
	case "tracker":
		return benchTracker(ctx, args[1:])
	case "call":
		return benchCall(ctx, args[1:])
	case "messaging":
		return benchMessaging(ctx, args[1:])
	case "chat":
		return benchChat(ctx, args[1:])
	case "cdrimport":
		return benchCDRImport(ctx, args[1:])
	}
	return fmt.Errorf("unknown mode %q (modes: xml, tracker, call, messaging, chat, cdrimport)", args[0])
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/models"
)

// The XML benchmark runs the server (the real app and the bare reference
// app) in a child process by default, so that the memory figures are the
// server's alone, not the load generator's or the in-process Redis's.

// server is the running server under test.
type server struct {
	xmlURL, bareURL string
	stop            func()
	// pid is the child's process id; 0 when the server runs in this
	// process (-inprocess, e.g. for -cpuprofile).
	pid int
}

// startServers runs both apps in this process or in a child.
func startServers(ctx context.Context, b *backend, inProcess bool) (*server, error) {
	// SBBENCH_SERVER_LOG=1 shows the server's log (e.g. when its models
	// were preloaded); by default it is discarded, as a quiet server's is.
	var logTo io.Writer = io.Discard
	if os.Getenv("SBBENCH_SERVER_LOG") == "1" {
		logTo = os.Stderr
	}
	log := slog.New(slog.NewTextHandler(logTo, nil))
	if inProcess {
		xmlURL, stopXML, err := startServer(ctx, b, log)
		if err != nil {
			return nil, err
		}
		bareURL, stopBare, err := startBare(b.st, b.rdb, log)
		if err != nil {
			stopXML()
			return nil, err
		}
		return &server{xmlURL: xmlURL, bareURL: bareURL, stop: func() { stopBare(); stopXML() }}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "xml-server", "-db", b.dbURL, "-redis", b.redisURL)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var xmlURL, bareURL string
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "URLS %s %s", &xmlURL, &bareURL); err != nil || serr != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("xml server child: %q %v %v", line, err, serr)
	}
	return &server{xmlURL: xmlURL, bareURL: bareURL, pid: cmd.Process.Pid, stop: func() {
		stdin.Close() // the child stops when its stdin closes
		_ = cmd.Wait()
	}}, nil
}

// serveXML is the child: it serves both apps until its stdin closes.
func serveXML(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("xml-server", flag.ContinueOnError)
	dbURL := fs.String("db", "", "database URL")
	redisURL := fs.String("redis", "", "Redis URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	reg, err := models.NewRegistry(models.Resources)
	if err != nil {
		return err
	}
	key, err := hexKey(benchKey)
	if err != nil {
		return err
	}
	sealer, err := models.NewSealer(key)
	if err != nil {
		return err
	}
	st, err := models.Open(ctx, *dbURL, reg, sealer)
	if err != nil {
		return err
	}
	defer st.Close()
	opts, err := redis.ParseURL(*redisURL)
	if err != nil {
		return err
	}
	opts.PoolSize = 64
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	b := &backend{dbURL: *dbURL, redisURL: *redisURL, st: st, rdb: rdb}
	s, err := startServers(ctx, b, true)
	if err != nil {
		return err
	}
	defer s.stop()
	fmt.Printf("URLS %s %s\n", s.xmlURL, s.bareURL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// benchRoutes are the reference app's extra routes: the bare page, and
// the server process's XML counters and memory for the report.
func benchRoutes() []fiberRoute {
	page := strings.Repeat("x", 1024)
	return []fiberRoute{
		{"/bench/bare", func(c *fiber.Ctx) error { return c.SendString(page) }},
		{"/bench/stats", func(c *fiber.Ctx) error { return c.JSON(fsxml.ReadStats()) }},
		{"/bench/memory", func(c *fiber.Ctx) error {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			before := fmt.Sprintf("heap in use %.1f MiB, Go runtime total %.1f MiB, RSS %s, peak RSS %s",
				float64(m.HeapInuse)/(1<<20), float64(m.Sys)/(1<<20), procStatus("self", "VmRSS"), procStatus("self", "VmHWM"))
			debug.FreeOSMemory()
			runtime.ReadMemStats(&m)
			// RSS counts the binary's pages too (RssFile): the part the
			// heap and the runtime's own memory explain is RssAnon.
			return c.SendString(before + fmt.Sprintf("; after a forced GC: heap in use %.1f MiB, RSS %s (anonymous %s, file-backed %s)",
				float64(m.HeapInuse)/(1<<20), procStatus("self", "VmRSS"), procStatus("self", "RssAnon"), procStatus("self", "RssFile")))
		}},
	}
}

type fiberRoute struct {
	path    string
	handler fiber.Handler
}

// stats reads the server's XML counters.
func (s *server) stats() fsxml.Stats {
	var st fsxml.Stats
	resp, err := http.Get(strings.TrimSuffix(s.bareURL, "/bench/bare") + "/bench/stats")
	if err != nil {
		return st
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&st)
	return st
}

// memory reports the server process's memory, then forces a GC in it.
func (s *server) memory() string {
	resp, err := http.Get(strings.TrimSuffix(s.bareURL, "/bench/bare") + "/bench/memory")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	where := "server process"
	if s.pid == 0 {
		where = "whole process: server, load generator, runtime"
	}
	return "memory after all modes (" + where + "): " + string(body)
}

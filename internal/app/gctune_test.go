package app

import (
	"runtime/debug"
	"testing"
)

// serve tunes the collector for a heap that is mostly the XML cache, and
// leaves it alone where the operator set GOGC or GOMEMLIMIT.
func TestSetMemoryLimitHonoursGoSettings(t *testing.T) {
	prevGC := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevGC); debug.SetMemoryLimit(prevLimit) })
	cfg := Config{XMLCacheBytes: 256 << 20}

	limit, gc := SetMemoryLimit(cfg, func(string) string { return "" })
	if limit != 512<<20 || gc != 50 || debug.SetMemoryLimit(-1) != 512<<20 || debug.SetGCPercent(50) != 50 {
		t.Errorf("defaults: limit %d, gc %d; want 512 MiB and 50", limit, gc)
	}

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(1 << 40)
	env := map[string]string{"GOGC": "200", "GOMEMLIMIT": "1GiB"}
	limit, gc = SetMemoryLimit(cfg, func(k string) string { return env[k] })
	if limit != 0 || gc != 0 || debug.SetMemoryLimit(-1) != 1<<40 || debug.SetGCPercent(100) != 100 {
		t.Errorf("with GOGC and GOMEMLIMIT set: limit %d, gc %d; want both left to the runtime", limit, gc)
	}
}

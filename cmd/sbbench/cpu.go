package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuMeter records CPU time used during a phase: this process (the server,
// its workers and the load generator), and the whole of the local MariaDB
// and ejabberd (every client of theirs, not only this benchmark), plus the
// load average, so runs on a shared host can be compared by the work they
// did rather than by latencies the scheduler decides.
type cpuMeter struct {
	self    time.Duration
	procs   map[string]time.Duration // by command name
	pids    map[string]int
	loadavg string
}

// cpuProcs are the services whose CPU a chat run reports.
var cpuProcs = []string{"mariadbd", "mysqld", "beam.smp"}

func startCPU() *cpuMeter {
	m := &cpuMeter{procs: map[string]time.Duration{}, pids: map[string]int{}, self: selfCPU(), loadavg: loadAvg()}
	for _, name := range cpuProcs {
		if pid := findProc(name); pid > 0 {
			m.pids[name] = pid
			m.procs[name] = procCPU(pid)
		}
	}
	return m
}

// report prints the CPU used since start, per message where n > 0.
func (m *cpuMeter) report(n int) {
	self := selfCPU() - m.self
	per := func(d time.Duration) string {
		if n == 0 {
			return ""
		}
		return fmt.Sprintf(" = %.2f ms/message", float64(d.Microseconds())/1000/float64(n))
	}
	fmt.Printf("  CPU: this process (server, worker, load generator) %.2fs%s", self.Seconds(), per(self))
	for _, name := range cpuProcs {
		pid, ok := m.pids[name]
		if !ok {
			continue
		}
		d := procCPU(pid) - m.procs[name]
		fmt.Printf("; %s (all its clients) %.2fs%s", name, d.Seconds(), per(d))
	}
	fmt.Printf("\n  load average before %s, after %s\n", m.loadavg, loadAvg())
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is a process's user + system time from /proc (clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// findProc returns the pid of the first process whose command is name.
func findProc(name string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil || strings.TrimSpace(string(b)) != name {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		return pid
	}
	return 0
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

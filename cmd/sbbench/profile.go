package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiles are the -cpuprofile, -mutexprofile and -blockprofile files of a
// benchmark whose server runs in this process: they cover the server, its
// background workers and the load generator alike.
type profiles struct {
	cpu, mutex, block string
	cpuFile           *os.File
}

func (p *profiles) flags(fl *flag.FlagSet) {
	fl.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the measured phase to this file")
	fl.StringVar(&p.mutex, "mutexprofile", "", "write a mutex contention profile of the measured phase to this file")
	fl.StringVar(&p.block, "blockprofile", "", "write a blocking profile (waits of 100 µs or more) of the measured phase to this file")
}

// start begins the profiles that were asked for.
func (p *profiles) start() error {
	if p.mutex != "" {
		runtime.SetMutexProfileFraction(1)
	}
	if p.block != "" {
		runtime.SetBlockProfileRate(100_000) // ns: record waits of 100 µs or more
	}
	if p.cpu == "" {
		return nil
	}
	f, err := os.Create(p.cpu)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	p.cpuFile = f
	return nil
}

// stop ends the profiles and writes them; it may be called more than once.
func (p *profiles) stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		err := p.cpuFile.Close()
		p.cpuFile = nil
		if err != nil {
			return err
		}
	}
	for _, w := range []struct{ file, name string }{{p.mutex, "mutex"}, {p.block, "block"}} {
		if w.file == "" {
			continue
		}
		f, err := os.Create(w.file)
		if err != nil {
			return err
		}
		err = pprof.Lookup(w.name).WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s profile: %w", w.name, err)
		}
	}
	runtime.SetMutexProfileFraction(0)
	runtime.SetBlockProfileRate(0)
	p.mutex, p.block = "", ""
	return nil
}

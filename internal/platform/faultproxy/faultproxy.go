// Package faultproxy is for tests of outages: a TCP relay in front of a
// service (the database, Redis) that a test cuts and restores.
package faultproxy

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP relay in front of a service (the database in the outage
// tests) that a test can cut and restore, as a network partition or a
// stopped server looks to the client: Cut closes every relayed connection
// and stops accepting (connects are refused); Restore accepts again on the
// same address.
type Proxy struct {
	Addr   string // host:port clients dial
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
}

// New relays a loopback port to target (host:port) until the test ends.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.Cut)
	return p
}

// URL returns rawURL (a database or Redis URL) with its host:port
// replaced by a proxy's, and the proxy.
func URL(t testing.TB, rawURL string) (string, *Proxy) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p := New(t, u.Host)
	u.Host = p.Addr
	return u.String(), p
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.relay(c)
		}
	}()
}

func (p *Proxy) relay(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // cut meanwhile
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// Cut refuses new connections and breaks the open ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore accepts connections again on the same address.
func (p *Proxy) Restore(t testing.TB) {
	t.Helper()
	ln, err := net.Listen("tcp", p.Addr)
	if err != nil {
		t.Fatalf("proxy restore: %v", err)
	}
	p.serve(ln)
}

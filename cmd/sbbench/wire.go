package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// wireConn is one keep-alive HTTP/1.1 connection of the load runs. It
// writes each request in one write and reads the answer by its
// Content-Length, reusing its buffers: the load generator shares the two
// cores with the server, and net/http's client spent several times the
// CPU wrk does a request (its p99 on the bare route was 3-5 ms, where
// wrk -t1 measured 0.8-1 ms on the same machine), so the tails measured
// were the generator's.
type wireConn struct {
	addr    string // host:port of the open connection
	timeout time.Duration
	conn    net.Conn
	r       *bufio.Reader
	out     []byte // the request being written
	body    []byte // the answer's body, when it must be read
}

func newWireConn(timeout time.Duration) *wireConn {
	return &wireConn{timeout: timeout}
}

func (c *wireConn) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// errWire is an answer this client cannot read (it expects what fasthttp
// sends for these routes: a status line, headers and a Content-Length).
var errWire = errors.New("unexpected HTTP answer")

// do sends r and reads its answer; a status other than 200 and an answer
// lacking r.expect are errors. Any error closes the connection: the next
// request opens a new one.
func (c *wireConn) do(r request) error {
	err := c.exchange(r)
	if err != nil {
		c.close()
	}
	return err
}

func (c *wireConn) exchange(r request) error {
	host, uri := splitURL(r.url)
	if c.conn != nil && host != c.addr {
		c.close()
	}
	if c.conn == nil {
		c.addr = host
		conn, err := net.DialTimeout("tcp", c.addr, c.timeout)
		if err != nil {
			return err
		}
		c.conn = conn
		if c.r == nil {
			c.r = bufio.NewReaderSize(conn, 32<<10)
		} else {
			c.r.Reset(conn)
		}
	}
	if c.timeout > 0 {
		if err := c.conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
			return err
		}
	}
	c.out = r.appendWire(c.out[:0], host, uri)
	if _, err := c.conn.Write(c.out); err != nil {
		return err
	}
	status, length, closing, err := c.readHead()
	if err != nil {
		return err
	}
	if r.expect == nil && status == 200 {
		if _, err := c.r.Discard(length); err != nil {
			return err
		}
	} else {
		if cap(c.body) < length {
			c.body = make([]byte, length)
		}
		c.body = c.body[:length]
		if _, err := io.ReadFull(c.r, c.body); err != nil {
			return err
		}
		if status != 200 {
			return fmt.Errorf("%s %s: status %d: %.300s", r.method, r.url, status, c.body)
		}
		if !bytes.Contains(c.body, r.expect) {
			return fmt.Errorf("%s %s: answer lacks %q: %.600s", r.method, r.url, r.expect, c.body)
		}
	}
	if closing {
		c.close()
	}
	return nil
}

// readHead reads the status line and headers of an answer.
func (c *wireConn) readHead() (status, length int, closing bool, err error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, 0, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, 0, false, fmt.Errorf("%w: status line %q", errWire, line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, 0, false, fmt.Errorf("%w: status line %q", errWire, line)
	}
	length = -1
	for {
		line, err = c.r.ReadSlice('\n')
		if err != nil {
			return 0, 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, 0, false, fmt.Errorf("%w: header %q", errWire, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return 0, 0, false, fmt.Errorf("%w: Content-Length %q", errWire, value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, 0, false, fmt.Errorf("%w: Transfer-Encoding %q", errWire, value)
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			closing = true
		}
	}
	if length < 0 {
		return 0, 0, false, fmt.Errorf("%w: no Content-Length", errWire)
	}
	return status, length, closing, nil
}

// appendWire appends r as HTTP/1.1 bytes (headers, then the body).
func (r request) appendWire(b []byte, host, uri string) []byte {
	b = append(b, r.method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	for k, v := range r.header {
		b = append(b, k...)
		b = append(b, ": "...)
		b = append(b, v...)
		b = append(b, "\r\n"...)
	}
	if r.body != nil {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(r.body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, r.body...)
}

// splitURL splits an http:// URL into host:port and the request URI.
func splitURL(rawURL string) (host, uri string) {
	rest := strings.TrimPrefix(rawURL, "http://")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[:i], rest[i:]
	}
	return rest, "/"
}

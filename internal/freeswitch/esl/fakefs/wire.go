// Package fakefs is a fake FreeSWITCH that speaks the inbound event socket
// (ESL) wire protocol over real TCP, so that Switchboard's esl package, and
// anything built on eslgo, can be tested without installing FreeSWITCH. It
// keeps fake channels, answers the call-control API commands the way
// mod_commands does and emits the matching channel events.
package fakefs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Header is one event header, kept in wire order.
type Header struct {
	Name  string
	Value string
}

// urlUnsafe is FreeSWITCH's SWITCH_URL_UNSAFE set: these bytes are written
// as %XX in event header values.
const urlUnsafe = "\r\n #%&+:;<=>?@[\\]^`{|}\""

// URLEncode encodes v the way switch_url_encode does: bytes outside
// 0x20..0x7E and the SWITCH_URL_UNSAFE characters become %XX with uppercase
// hex digits, except a % already followed by two hex digits. An empty value is
// written as _undef_, as FreeSWITCH serialises empty headers.
func URLEncode(v string) string {
	if v == "" {
		return "_undef_"
	}
	if !needsEncoding(v) {
		return v
	}
	return string(appendURLEncoded(make([]byte, 0, len(v)+16), v))
}

// urlUnsafeByte marks the bytes URLEncode writes as %XX (before the
// exception for an existing %XX escape).
var urlUnsafeByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c > 0x7e || strings.IndexByte(urlUnsafe, byte(c)) >= 0
	}
	return t
}()

// needsEncoding reports whether v has a byte URLEncode would change.
func needsEncoding(v string) bool {
	for i := 0; i < len(v); i++ {
		if urlUnsafeByte[v[i]] {
			return true
		}
	}
	return false
}

const upperHex = "0123456789ABCDEF"

// appendURLEncoded appends URLEncode(v) to dst without intermediate strings;
// events are serialised with it on the fake's hot path.
func appendURLEncoded(dst []byte, v string) []byte {
	if v == "" {
		return append(dst, "_undef_"...)
	}
	if !needsEncoding(v) {
		return append(dst, v...)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '%' && i+2 < len(v) && isHex(v[i+1]) && isHex(v[i+2]):
			dst = append(dst, c)
		case urlUnsafeByte[c]:
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// plainFramePrefix starts every text/event-plain frame; the inner length
// and the blank line follow.
const plainFramePrefix = "Content-Length: "
const plainFrameType = "\nContent-Type: text/event-plain\n\n"

// plainEvent serialises an event as text/event-plain, outer frame included.
// The inner block is written once, after room for the outer header, and
// the outer header is then put in front of it, so the frame is built in a
// single buffer.
func plainEvent(headers []Header, body string) []byte {
	size := len(body) + 32
	for _, h := range headers {
		size += len(h.Name) + len(h.Value) + 3
	}
	// Room for the outer header: prefix, up to 20 digits, the type line.
	const room = len(plainFramePrefix) + 20 + len(plainFrameType)
	buf := make([]byte, room, room+size+size/4)
	for _, h := range headers {
		buf = append(buf, h.Name...)
		buf = append(buf, ": "...)
		buf = appendURLEncoded(buf, h.Value)
		buf = append(buf, '\n')
	}
	if body != "" {
		buf = append(buf, "Content-Length: "...)
		buf = strconv.AppendInt(buf, int64(len(body)), 10)
		buf = append(buf, "\n\n"...)
		buf = append(buf, body...)
	} else {
		buf = append(buf, '\n')
	}
	var num [20]byte
	digits := strconv.AppendInt(num[:0], int64(len(buf)-room), 10)
	start := room - len(plainFramePrefix) - len(digits) - len(plainFrameType)
	w := buf[start:start]
	w = append(w, plainFramePrefix...)
	w = append(w, digits...)
	_ = append(w, plainFrameType...)
	return buf[start:]
}

// jsonEvent serialises an event as text/event-json: a compact object of
// unencoded string values with the body under "_body". A repeated header
// keeps its first value.
func jsonEvent(headers []Header, body string) []byte {
	var in strings.Builder
	seen := make(map[string]bool, len(headers))
	in.WriteByte('{')
	add := func(k, v string) {
		if in.Len() > 1 {
			in.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		in.Write(kb)
		in.WriteByte(':')
		in.Write(vb)
	}
	for _, h := range headers {
		if seen[h.Name] {
			continue
		}
		seen[h.Name] = true
		add(h.Name, h.Value)
	}
	if body != "" {
		add("Content-Length", strconv.Itoa(len(body)))
		add("_body", body)
	}
	in.WriteByte('}')
	return []byte(fmt.Sprintf("Content-Length: %d\nContent-Type: text/event-json\n\n%s", in.Len(), in.String()))
}

// commandReply builds a command/reply frame; extra headers follow Reply-Text.
func commandReply(text string, extra ...Header) []byte {
	var b strings.Builder
	b.WriteString("Content-Type: command/reply\nReply-Text: " + text + "\n")
	for _, h := range extra {
		b.WriteString(h.Name + ": " + h.Value + "\n")
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

// apiResponse builds an api/response frame; Content-Length counts bytes.
func apiResponse(body string) []byte {
	return []byte(fmt.Sprintf("Content-Type: api/response\nContent-Length: %d\n\n%s", len(body), body))
}

// Disconnect notice texts (mod_event_socket).
const (
	byeText      = "Disconnected, goodbye.\nSee you at ClueCon! http://www.cluecon.com/\n"
	shutdownText = "The system is being shut down.\n"
)

func disconnectNotice(text string) []byte {
	return []byte(fmt.Sprintf("Content-Type: text/disconnect-notice\nContent-Length: %d\n\n%s", len(text), text))
}

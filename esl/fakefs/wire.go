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
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '%' && i+2 < len(v) && isHex(v[i+1]) && isHex(v[i+2]) {
			b.WriteByte(c)
			continue
		}
		if c < 0x20 || c > 0x7e || strings.IndexByte(urlUnsafe, c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// plainEvent serialises an event as text/event-plain, outer frame included.
func plainEvent(headers []Header, body string) []byte {
	var in strings.Builder
	for _, h := range headers {
		in.WriteString(h.Name)
		in.WriteString(": ")
		in.WriteString(URLEncode(h.Value))
		in.WriteByte('\n')
	}
	if body != "" {
		in.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\n\n")
		in.WriteString(body)
	} else {
		in.WriteByte('\n')
	}
	return []byte(fmt.Sprintf("Content-Length: %d\nContent-Type: text/event-plain\n\n%s", in.Len(), in.String()))
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

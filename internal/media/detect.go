// Package media turns uploaded audio into files FreeSWITCH plays: it
// detects the format from the bytes, converts with Debian's sox (mono 16-bit
// WAV at the rate asked for), stores the result under a per-tenant
// directory without ever leaving a half-written file, and serves it back.
package media

import (
	"bytes"
	"errors"
)

// Format is an audio container recognised from its first bytes.
type Format string

// The formats accepted for conversion.
const (
	WAV  Format = "wav"
	MP3  Format = "mp3"
	OGG  Format = "ogg"
	FLAC Format = "flac"
)

// ErrUnsupported means the bytes are not audio in an accepted format (415).
var ErrUnsupported = errors.New("not WAV, MP3, OGG or FLAC audio")

// Detect names the format of b from its magic bytes, never a file name.
func Detect(b []byte) (Format, error) {
	switch {
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return WAV, nil
	case bytes.HasPrefix(b, []byte("OggS")):
		return OGG, nil
	case bytes.HasPrefix(b, []byte("fLaC")):
		return FLAC, nil
	case bytes.HasPrefix(b, []byte("ID3")) || mpegFrame(b):
		return MP3, nil
	}
	return "", ErrUnsupported
}

// mpegFrame reports whether b starts with an MPEG audio frame header: an
// 11-bit sync, a defined version and layer, and a usable bitrate and rate.
func mpegFrame(b []byte) bool {
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return false
	}
	version, layer := (b[1]>>3)&0x03, (b[1]>>1)&0x03
	bitrate, rate := b[2]>>4, (b[2]>>2)&0x03
	return version != 1 && layer != 0 && bitrate != 0x0F && bitrate != 0 && rate != 3
}

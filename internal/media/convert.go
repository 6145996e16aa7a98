package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrUndecodable means the bytes looked like audio but sox could not
// decode them (truncated, corrupt, or an unsupported codec inside the
// container); the API answers 415 as for any other non-audio body.
var ErrUndecodable = errors.New("the audio could not be decoded")

// Converter runs sox. Sox is Debian's sox binary (with libsox-fmt-mp3 for
// MP3); Timeout bounds one conversion.
type Converter struct {
	Sox     string
	Timeout time.Duration
}

func (c Converter) sox() string {
	if c.Sox == "" {
		return "sox"
	}
	return c.Sox
}

func (c Converter) timeout() time.Duration {
	if c.Timeout <= 0 {
		return time.Minute
	}
	return c.Timeout
}

// declaredSeconds is the play time src's header declares (sox --i -D, as
// soxi; src's name ends in its format's extension, which is how sox --i
// picks its reader), read without decoding the audio; ok is false when sox
// cannot tell, and the bounded conversion decides then.
func (c Converter) declaredSeconds(ctx context.Context, src string) (secs float64, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	out, err := exec.CommandContext(ctx, c.sox(), "--i", "-D", src).Output()
	if err != nil {
		return 0, false
	}
	secs, err = strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	return secs, err == nil && secs > 0
}

// convert writes src (in format f) to dst as mono 16-bit signed PCM WAV
// at rate, at most maxSeconds of it (sox's trim ends the conversion there,
// whatever the input claims, so the output never grows past that bound).
// sox's own messages go to the returned error for logs only.
func (c Converter) convert(ctx context.Context, src string, f Format, dst string, rate int, maxSeconds float64) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	// -V1: errors only; the explicit input type keeps sox from guessing
	// by a name we chose ourselves anyway.
	args := []string{"-V1", "-t", string(f), src,
		"-t", "wav", "-e", "signed-integer", "-b", "16", "-c", "1", "-r", strconv.Itoa(rate), dst}
	if maxSeconds > 0 {
		args = append(args, "trim", "0", strconv.FormatFloat(maxSeconds, 'f', 3, 64))
	}
	cmd := exec.CommandContext(ctx, c.sox(), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("sox %s→wav: %w", f, ctx.Err())
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("%w: sox %s→wav: %s", ErrUndecodable, f, strings.TrimSpace(stderr.String()))
		}
		return fmt.Errorf("run sox: %w", err)
	}
	return nil
}

// wavInfo reads a PCM WAV's rate and play time from its header.
type wavInfo struct {
	Rate       int
	DurationMS int64
}

// readWAVInfo walks the RIFF chunks of the file at path up to "data".
func readWAVInfo(path string) (wavInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return wavInfo{}, fmt.Errorf("open converted audio: %w", err)
	}
	defer f.Close()
	var hdr [12]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil || string(hdr[:4]) != "RIFF" || string(hdr[8:]) != "WAVE" {
		return wavInfo{}, fmt.Errorf("converted audio is not RIFF/WAVE")
	}
	var info wavInfo
	var byteRate uint32
	for {
		var ch [8]byte
		if _, err := io.ReadFull(f, ch[:]); err != nil {
			return wavInfo{}, fmt.Errorf("converted audio has no data chunk: %w", err)
		}
		size := binary.LittleEndian.Uint32(ch[4:])
		switch string(ch[:4]) {
		case "fmt ":
			body := make([]byte, size)
			if _, err := io.ReadFull(f, body); err != nil || size < 16 {
				return wavInfo{}, fmt.Errorf("converted audio: short fmt chunk")
			}
			info.Rate = int(binary.LittleEndian.Uint32(body[4:8]))
			byteRate = binary.LittleEndian.Uint32(body[8:12])
		case "data":
			if byteRate == 0 {
				return wavInfo{}, fmt.Errorf("converted audio: data before fmt")
			}
			info.DurationMS = int64(size) * 1000 / int64(byteRate)
			return info, nil
		default:
			if _, err := f.Seek(int64(size+size%2), io.SeekCurrent); err != nil {
				return wavInfo{}, fmt.Errorf("converted audio: %w", err)
			}
		}
	}
}

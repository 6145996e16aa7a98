package outbox

import (
	"crypto/rand"
	"encoding/binary"
)

func randInt() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:])
}

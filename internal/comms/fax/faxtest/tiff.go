package faxtest

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
)

// CallUUID is a random call id in FreeSWITCH's 8-4-4-4-12 shape (tests
// sharing a database need calls of their own).
func CallUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// TIFF is a minimal TIFF file of n pages (one directory each, chained),
// in Intel byte order, or Motorola when bigEndian, followed by pad bytes
// of image data.
func TIFF(pages int, bigEndian bool, pad int) []byte {
	var o binary.AppendByteOrder = binary.LittleEndian
	b := []byte("II")
	if bigEndian {
		o, b = binary.BigEndian, []byte("MM")
	}
	b = o.AppendUint16(b, 42)
	b = o.AppendUint32(b, 8)
	for i := 0; i < pages; i++ {
		// One entry: ImageWidth (256), SHORT, count 1, 1728 dots (a fax line).
		b = o.AppendUint16(b, 1)
		b = o.AppendUint16(b, 256)
		b = o.AppendUint16(b, 3)
		b = o.AppendUint32(b, 1)
		b = o.AppendUint16(b, 1728)
		b = o.AppendUint16(b, 0)
		next := uint32(0)
		if i < pages-1 {
			next = uint32(len(b) + 4)
		}
		b = o.AppendUint32(b, next)
	}
	return append(b, make([]byte, pad)...)
}

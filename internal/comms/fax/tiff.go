package fax

import (
	"encoding/binary"
	"errors"
)

// ErrNotTIFF is what an upload that is not a TIFF file gets (415).
var ErrNotTIFF = errors.New("not a TIFF file")

// maxPages bounds the walk of a TIFF's page chain (a fax has a few dozen
// pages at most; a longer or looping chain is not a fax).
const maxPages = 1000

// TIFFPages checks that b is a TIFF file, from its bytes (the byte-order
// mark, the magic number 42 and a chain of image file directories inside
// the file), and counts its pages: the directories of the chain.
func TIFFPages(b []byte) (int, error) {
	if len(b) < 8 {
		return 0, ErrNotTIFF
	}
	var order binary.ByteOrder
	switch string(b[:2]) {
	case "II":
		order = binary.LittleEndian
	case "MM":
		order = binary.BigEndian
	default:
		return 0, ErrNotTIFF
	}
	if order.Uint16(b[2:4]) != 42 {
		return 0, ErrNotTIFF
	}
	off := uint64(order.Uint32(b[4:8]))
	seen := map[uint64]bool{}
	pages := 0
	for off != 0 {
		if off < 8 || off+2 > uint64(len(b)) || seen[off] || pages == maxPages {
			return 0, ErrNotTIFF
		}
		seen[off] = true
		entries := uint64(order.Uint16(b[off : off+2]))
		next := off + 2 + entries*12
		if entries == 0 || next+4 > uint64(len(b)) {
			return 0, ErrNotTIFF
		}
		pages++
		off = uint64(order.Uint32(b[next : next+4]))
	}
	if pages == 0 {
		return 0, ErrNotTIFF
	}
	return pages, nil
}

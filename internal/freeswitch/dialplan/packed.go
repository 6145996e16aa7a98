package dialplan

import (
	"cmp"
	"errors"
	"iter"
	"slices"
	"strings"
	"unsafe"
)

// packedExtensions holds a prepared snapshot's extensions in two
// pointer-free blocks instead of one Extension struct each: a tenant model
// keeps one per user (a million at the largest installations), and as
// structs they were most of the live heap (368 bytes and 19 string headers
// a user, every one of them scanned by each garbage collection). Packed,
// a user costs a 72-byte record and its string bytes, and the collector
// skips both blocks: a string holds the text, the records no pointer.
//
// Renders see an Extension as before: unpack copies a record's numbers and
// slices its strings out of the text (no copy, no allocation).
type packedExtensions struct {
	text    string      // every extension's strings, back to back
	records []packedExt // in the order given (ORDER BY id)
	byName  []int32     // positions in records ordered by name, the first of equal names first
}

// packedExt is one extension. ends are where each of its strings ends in
// text, counted from off; a record whose strings exceed 64 KiB in total
// is not packed (packExtensions fails and the snapshot keeps its structs).
type packedExt struct {
	emergencyLocationID, mohClassID int64
	off                             uint32
	ringSeconds, maxRegistrations   int32
	ends                            [packedStrings]uint16
	flags                           uint16
}

// packedStrings is the number of string fields of an Extension (the
// forward destinations included); extStrings lists them in order.
const packedStrings = 19

// extStrings returns pointers to x's string fields, in the order a record
// keeps them.
func extStrings(x *Extension) [packedStrings]*string {
	return [packedStrings]*string{&x.Name, &x.FirstName, &x.LastName, &x.CallerID, &x.Email, &x.Mobile,
		&x.SIPSecret, &x.VoicemailPIN, &x.VoicemailEmail, &x.CallPermission, &x.Record, &x.AccountCode,
		&x.OutboundCallerID, &x.Language, &x.Timezone, &x.ForwardAll.Destination, &x.ForwardBusy.Destination,
		&x.ForwardNoAnswer.Destination, &x.ForwardUnregistered.Destination}
}

// extFlags returns pointers to x's boolean fields, bit i of a record's
// flags being the i-th.
func extFlags(x *Extension) [12]*bool {
	return [12]*bool{&x.VoicemailEnabled, &x.VoicemailAttachAudio, &x.VoicemailDeleteAfterEmail, &x.DND,
		&x.CallWaiting, &x.DirectoryVisible, &x.DirectoryExtensionVisible, &x.Enabled,
		&x.ForwardAll.Enabled, &x.ForwardBusy.Enabled, &x.ForwardNoAnswer.Enabled, &x.ForwardUnregistered.Enabled}
}

// packExtensions packs exts; ok is false when one of them cannot be (its
// strings are longer than a record can address) or there are none.
func packExtensions(exts []Extension) (p *packedExtensions, ok bool) {
	if len(exts) == 0 {
		return nil, false
	}
	size := 0
	for i := range exts {
		n := 0
		for _, f := range extStrings(&exts[i]) {
			n += len(*f)
		}
		if n > 0xFFFF {
			return nil, false
		}
		size += n
	}
	if size > 0xFFFFFFFF {
		return nil, false
	}
	var text strings.Builder
	text.Grow(size)
	p = &packedExtensions{records: make([]packedExt, len(exts))}
	for i := range exts {
		x, r := &exts[i], &p.records[i]
		r.off = uint32(text.Len())
		for j, f := range extStrings(x) {
			text.WriteString(*f)
			r.ends[j] = uint16(text.Len() - int(r.off))
		}
		for j, f := range extFlags(x) {
			if *f {
				r.flags |= 1 << j
			}
		}
		r.emergencyLocationID, r.mohClassID = x.EmergencyLocationID, x.MOHClassID
		r.ringSeconds, r.maxRegistrations = x.RingSeconds, x.MaxRegistrations
	}
	p.text = text.String()
	p.byName = make([]int32, len(exts))
	for i := range p.byName {
		p.byName[i] = int32(i)
	}
	slices.SortStableFunc(p.byName, func(a, b int32) int { return cmp.Compare(p.name(a), p.name(b)) })
	return p, true
}

// name is record i's extension number (its first string).
func (p *packedExtensions) name(i int32) string {
	r := &p.records[i]
	return p.text[r.off : r.off+uint32(r.ends[0])]
}

// unpack fills x with record i.
func (p *packedExtensions) unpack(i int, x *Extension) {
	r := &p.records[i]
	*x = Extension{EmergencyLocationID: r.emergencyLocationID, MOHClassID: r.mohClassID,
		RingSeconds: r.ringSeconds, MaxRegistrations: r.maxRegistrations}
	start := r.off
	for j, f := range extStrings(x) {
		end := r.off + uint32(r.ends[j])
		*f = p.text[start:end]
		start = end
	}
	for j, f := range extFlags(x) {
		*f = r.flags&(1<<j) != 0
	}
}

// find returns the position of the first record named name.
func (p *packedExtensions) find(name string) (int, bool) {
	i, ok := slices.BinarySearchFunc(p.byName, name, func(j int32, name string) int {
		return cmp.Compare(p.name(j), name)
	})
	if !ok {
		return 0, false
	}
	return int(p.byName[i]), true
}

// bytes is the memory p holds.
func (p *packedExtensions) bytes() int {
	if p == nil {
		return 0
	}
	return len(p.text) + len(p.records)*int(unsafe.Sizeof(packedExt{})) + 4*len(p.byName)
}

func (s *TenantSnapshot) packed() *packedExtensions {
	if s.prepared == nil {
		return nil
	}
	return s.prepared.packed
}

// ExtensionCount is the number of extensions the snapshot holds.
func (s *TenantSnapshot) ExtensionCount() int {
	if p := s.packed(); p != nil {
		return len(p.records)
	}
	return len(s.Extensions)
}

// eachExtension yields the snapshot's extensions in order. The pointer is
// valid only until the next one: a packed snapshot unpacks each into the
// same variable.
func (s *TenantSnapshot) eachExtension() iter.Seq[*Extension] {
	return func(yield func(*Extension) bool) {
		if p := s.packed(); p != nil {
			var x Extension
			for i := range p.records {
				p.unpack(i, &x)
				if !yield(&x) {
					return
				}
			}
			return
		}
		for i := range s.Extensions {
			if !yield(&s.Extensions[i]) {
				return
			}
		}
	}
}

// ExtensionList returns a copy of the snapshot's extensions, in order.
func (s *TenantSnapshot) ExtensionList() []Extension {
	out := make([]Extension, 0, s.ExtensionCount())
	for x := range s.eachExtension() {
		out = append(out, *x)
	}
	return out
}

// ExtensionNamed returns the extension named name (nil when there is
// none): the snapshot's own when it holds structs, else a copy.
func (s *TenantSnapshot) ExtensionNamed(name string) *Extension { return s.extension(name) }

// ExtensionBytes is the memory the snapshot's extensions take once
// prepared: their packed records, text and name index, or as structs.
func (s *TenantSnapshot) ExtensionBytes() int {
	if p := s.packed(); p != nil {
		return p.bytes()
	}
	n := len(s.Extensions) * int(unsafe.Sizeof(Extension{}))
	for i := range s.Extensions {
		for _, f := range extStrings(&s.Extensions[i]) {
			n += len(*f)
		}
	}
	return n
}

// ExtensionBlocks are a prepared snapshot's packed extensions as three
// flat blocks, for keeping a model outside the process (fsxml keeps its
// models in a file across restarts). Records and ByName are the records'
// and the index's memory as they are: a file is read back only by the
// binary that wrote it (its reader checks that), so the layout needs no
// encoding and a million users are restored at the speed of a copy.
type ExtensionBlocks struct {
	Text    string
	Records []byte
	ByName  []byte
}

// ExtensionBlocks returns the snapshot's packed extensions; ok is false
// when it holds them as structs (or holds none).
func (s *TenantSnapshot) ExtensionBlocks() (b ExtensionBlocks, ok bool) {
	p := s.packed()
	if p == nil {
		return b, false
	}
	return ExtensionBlocks{Text: p.text, Records: asBytes(p.records), ByName: asBytes(p.byName)}, true
}

// SetExtensionBlocks makes blocks from ExtensionBlocks the extensions of
// an unprepared snapshot without Extensions; Prepare keeps them. The
// blocks are checked (every string within the text, the index a sorted
// permutation of the records), so damaged blocks are refused rather than
// rendered or panicked on.
func (s *TenantSnapshot) SetExtensionBlocks(b ExtensionBlocks) error {
	if s.Extensions != nil || s.prepared != nil {
		return errors.New("extension blocks: the snapshot already holds extensions")
	}
	size := int(unsafe.Sizeof(packedExt{}))
	if len(b.Records) == 0 || len(b.Records)%size != 0 || len(b.ByName) != len(b.Records)/size*4 {
		return errors.New("extension blocks: sizes do not match")
	}
	p := &packedExtensions{text: b.Text, records: make([]packedExt, len(b.Records)/size), byName: make([]int32, len(b.ByName)/4)}
	copy(asBytes(p.records), b.Records)
	copy(asBytes(p.byName), b.ByName)
	for i := range p.records {
		r := &p.records[i]
		prev := uint16(0)
		for _, end := range r.ends {
			if end < prev {
				return errors.New("extension blocks: a record's strings overlap")
			}
			prev = end
		}
		if uint64(r.off)+uint64(prev) > uint64(len(p.text)) {
			return errors.New("extension blocks: a record's strings lie outside the text")
		}
	}
	seen := make([]bool, len(p.records))
	for i, j := range p.byName {
		if j < 0 || int(j) >= len(p.records) || seen[j] {
			return errors.New("extension blocks: the name index is not a permutation")
		}
		seen[j] = true
		if i > 0 && p.name(p.byName[i-1]) > p.name(j) {
			return errors.New("extension blocks: the name index is not sorted")
		}
	}
	s.prepared = &snapIndex{packed: p}
	return nil
}

// asBytes is the memory of a slice of pointer-free values.
func asBytes[T packedExt | int32](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(v[0])))
}

package fsxml

import (
	"crypto/sha256"
	"encoding/hex"
)

// lookup is what a fetch's cached document is keyed by: the tenant whose
// generation applies and exactly the request fields the answer depends on
// (see docs/architecture.md, "What each answer depends on").
type lookup struct {
	tenant string // lower-case tenant name, "" for platform-only documents
	did    string // public context: the dialled DID digits
	key    string // section and the request fields every render of it reads
	minute string // for renders that read the clock ('t')
	caller string // for renders that read the caller ('c')
	// everyTenant marks a document built from every tenant's data
	// (callcenter.conf at module load): rendered from the database, never
	// cached, because no one generation covers it.
	everyTenant bool
}

// keyPart keeps request-derived key parts bounded: long ones are hashed.
func keyPart(s string) string {
	if len(s) <= 96 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "h" + hex.EncodeToString(sum[:16])
}

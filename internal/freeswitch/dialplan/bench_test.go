package dialplan

import (
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

func BenchmarkDirectorySIPAuth(b *testing.B) {
	snap := loadSnap(b)
	req := xmlcurl.ParseRequest(fakefs.FormWith(capture(b, "009"), "key_value", testDomain, "domain", testDomain, "user", "1001-acme"))
	b.ReportAllocs()
	for b.Loop() {
		if xmldoc.IsNotFound(Directory(testOpts, req, snap)) {
			b.Fatal("not found")
		}
	}
}

func BenchmarkDialplanPublicCondition(b *testing.B) {
	snap := loadSnap(b)
	req := callRequest(b, "public", "+27115550100")
	pub := publicFor(snap, "+27115550100")
	now := at(b, "2026-11-23 10:00")
	b.ReportAllocs()
	for b.Loop() {
		if doc, _ := Public(testOpts, req, pub, now); xmldoc.IsNotFound(doc) {
			b.Fatal("not found")
		}
	}
}

func BenchmarkDialplanOutbound(b *testing.B) {
	snap := loadSnap(b)
	req := callRequest(b, "acme", "0825550123")
	now := at(b, "2026-11-23 10:00")
	b.ReportAllocs()
	for b.Loop() {
		if doc, _ := TenantContext(testOpts, req, snap, now); xmldoc.IsNotFound(doc) {
			b.Fatal("not found")
		}
	}
}

func BenchmarkDialplanLocalExtension(b *testing.B) {
	snap := loadSnap(b)
	req := callRequest(b, "acme", "1001")
	now := at(b, "2026-11-23 10:00")
	b.ReportAllocs()
	for b.Loop() {
		if doc, _ := TenantContext(testOpts, req, snap, now); xmldoc.IsNotFound(doc) {
			b.Fatal("not found")
		}
	}
}

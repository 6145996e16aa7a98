package esl

import (
	"net/textproto"
	"testing"
)

func TestCanonicalTablesMatchTextproto(t *testing.T) {
	for _, n := range knownHeaders {
		if got, want := canonical(n), textproto.CanonicalMIMEHeaderKey(n); got != want {
			t.Errorf("canonical(%q) = %q, want %q", n, got, want)
		}
	}
	for _, n := range knownVars {
		if got, want := canonicalVars[n], textproto.CanonicalMIMEHeaderKey("variable_"+n); got != want {
			t.Errorf("canonicalVars[%q] = %q, want %q", n, got, want)
		}
	}
	e := NewEvent("n", map[string]string{"variable_sb_tenant": "acme", "Unique-ID": "u1", "X-Other": "_undef_"}, "")
	if e.Var("sb_tenant") != "acme" || e.Get("Unique-ID") != "u1" || e.Get("x-other") != "" || e.Var("unknown") != "" {
		t.Errorf("lookups on %v", e.Headers)
	}
}

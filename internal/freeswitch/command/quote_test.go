package command

import (
	"testing"
)

func TestQuoteVar(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "plain number", in: "+442071234567", want: "+442071234567"},
		{name: "empty", in: "", want: ""},
		{name: "space is single quoted", in: "ACME Sales", want: "'ACME Sales'"},
		{name: "comma splits vars", in: "a,b", wantErr: true},
		{name: "brace closes block", in: "x}sofia/gateway/evil/1", wantErr: true},
		{name: "bracket", in: "x]", wantErr: true},
		{name: "angle", in: "<x>", wantErr: true},
		{name: "pipe adds a leg", in: "1|sofia/gateway/gw/2", wantErr: true},
		{name: "quote", in: "O'Brien", wantErr: true},
		{name: "api expansion", in: "${uuid_kill all}", wantErr: true},
		{name: "newline", in: "a\nb", wantErr: true},
		{name: "separator change", in: "^^:a", wantErr: true},
		{name: "enterprise separator", in: "a:_:b", wantErr: true},
		{name: "backslash", in: `a\b`, wantErr: true},
		{name: "unicode name ok", in: "Zoë", want: "Zoë"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := QuoteVar(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("QuoteVar(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("QuoteVar(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSafeArg(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"uuid", "5c2a8f0e-8b1d-4c7e-9f3a-2b6d1e0a9c47", true},
		{"path", "/var/lib/switchboard/rec/acme/2025-01-15/5c2a.wav", true},
		{"destination", "+442071234567", true},
		{"empty", "", false},
		{"space adds an argument", "1000 XML evil", false},
		{"app call", "&bridge(sofia/gateway/x/1)", false},
		{"newline", "a\nbgapi x", false},
		{"variable block", "{a=b}", false},
		{"expansion", "${x}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SafeArg(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("SafeArg(%q) err = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if tt.ok && got != tt.in {
				t.Errorf("SafeArg(%q) = %q", tt.in, got)
			}
		})
	}
}

func TestQuoteListVar(t *testing.T) {
	for in, want := range map[string]string{
		"internal,local,national": "internal,local,national",
		"internal":                "internal",
		"Eve Smith":               "'Eve Smith'",
	} {
		if got, err := QuoteListVar(in); err != nil || got != want {
			t.Errorf("QuoteListVar(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a'b", "a}b", "${x}", "a\nb", "a:_:b", "a;b", "^^,x"} {
		if _, err := QuoteListVar(bad); err == nil {
			t.Errorf("QuoteListVar(%q) accepted", bad)
		}
	}
}

// TestVarBlockUsesTheSeparatorOverride: a list value must not be single
// quoted (the originate API strips the quotes, then splits at its commas).
func TestVarBlockUsesTheSeparatorOverride(t *testing.T) {
	got := VarBlock([]string{"origination_uuid=u1", "toll_allow=internal,local", "n='A B'"})
	if want := "{^^;origination_uuid=u1;toll_allow=internal,local;n='A B'}"; got != want {
		t.Errorf("VarBlock = %q, want %q", got, want)
	}
}

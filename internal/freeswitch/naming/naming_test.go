package naming

import "testing"

func TestSplitTenantObjectName(t *testing.T) {
	for in, want := range map[string]bool{"acme_91": true, "my_co_7": true, "acme_0": false, "_91": false, "acme_": false, "a-b_1": false} {
		if _, _, ok := SplitTenantObjectName(in); ok != want {
			t.Errorf("%s: ok %v", in, ok)
		}
	}
	if tenant, id, _ := SplitTenantObjectName("my_co_7"); tenant != "my_co" || id != 7 {
		t.Errorf("my_co_7: %s %d", tenant, id)
	}
}

func TestSplitCallcenterName(t *testing.T) {
	for in, want := range map[string]bool{"500@acme": true, "12@my_co": true, "5@acme": false, "500@": false, "@acme": false, "500@a-b": false, "500@acme@x": false} {
		if _, _, ok := SplitCallcenterName(in); ok != want {
			t.Errorf("%s: ok %v", in, ok)
		}
	}
}

func TestSplitUserID(t *testing.T) {
	tests := []struct {
		name, id, ext, tenant string
		ok                    bool
	}{
		{"plain", "1001-acme", "1001", "acme", true},
		{"underscore tenant", "20-acme_za", "20", "acme_za", true},
		{"no hyphen", "1001", "", "", false},
		{"hyphen in tenant part", "1001-ac-me", "", "", false},
		{"letters in extension", "10a1-acme", "", "", false},
		{"short tenant", "1001-a", "", "", false},
		{"long extension", "12345678901-acme", "", "", false},
		{"injection", "1001-acme\"/><x", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ext, tenant, ok := SplitUserID(tt.id)
			if ext != tt.ext || tenant != tt.tenant || ok != tt.ok {
				t.Fatalf("SplitUserID(%q) = %q, %q, %v", tt.id, ext, tenant, ok)
			}
		})
	}
}

func TestUserIDSplits(t *testing.T) {
	if id := UserID("acme", "1001"); id != "1001-acme" {
		t.Fatalf("UserID = %q", id)
	}
	if ext, tenant, ok := SplitUserID(UserID("acme_za", "20")); !ok || ext != "20" || tenant != "acme_za" {
		t.Fatalf("round trip: %q %q %v", ext, tenant, ok)
	}
	if VoicemailBox("acme", "800") != UserID("acme", "800") {
		t.Fatal("a mailbox is not its directory user")
	}
}

func TestWidgetNames(t *testing.T) {
	id := WidgetUserID("0123456789abcdef01234567", "acme")
	if tenant, ok := SplitWidgetUserID(id); !ok || tenant != "acme" {
		t.Fatalf("%s: %q %v", id, tenant, ok)
	}
	if _, _, ok := SplitUserID(id); ok {
		t.Fatalf("%s taken for an extension user", id)
	}
	for _, id := range []string{"1001-acme", "wshort-acme", "w0123456789ABCDEF01234567-acme", "w0123456789abcdef01234567-ac-me", "x0123456789abcdef01234567-acme"} {
		if _, ok := SplitWidgetUserID(id); ok {
			t.Errorf("%s taken for a widget user", id)
		}
	}
	if got, ok := WidgetPublicID(WidgetContext("pub23456789abcdefghi")); !ok || got != "pub23456789abcdefghi" {
		t.Errorf("widget context round trip: %q %v", got, ok)
	}
	if _, ok := WidgetPublicID("acme"); ok {
		t.Errorf("a tenant context taken for a widget's")
	}
}

func TestDirectoryDomainTenant(t *testing.T) {
	if tenant, ok := DirectoryDomainTenant(DirectoryDomain("acme")); !ok || tenant != "acme" {
		t.Fatalf("round trip: %q %v", tenant, ok)
	}
	if tenant, ok := DirectoryDomainTenant("ACME.Directory.Invalid"); !ok || tenant != "ACME" {
		t.Fatalf("case: %q %v", tenant, ok)
	}
	for _, d := range []string{"sb.example", ".directory.invalid", "a-b.directory.invalid"} {
		if _, ok := DirectoryDomainTenant(d); ok {
			t.Errorf("%s taken for a dial-by-name domain", d)
		}
	}
}

func TestA1Hash(t *testing.T) {
	// md5("1001-acme:sb.example:secret")
	if got := A1Hash("1001-acme", "sb.example", "secret"); got != "df0e18ddaf428be197fb50cdf08a7ab0" {
		t.Fatalf("A1Hash = %s", got)
	}
}

func TestNodePaths(t *testing.T) {
	if got := VoicemailStorageDir("/var/lib/media/", "acme", "1001"); got != "/var/lib/media/acme/voicemail/1001" {
		t.Fatalf("storage dir %q", got)
	}
	if got := PhoneRecordingDir("/var/lib/media", "acme"); got != "/var/lib/media/acme/phone" {
		t.Fatalf("phone dir %q", got)
	}
	for _, bad := range [][3]string{{"media", "acme", "1001"}, {"/m/${x}", "acme", "1001"}, {"/m", "a-b", "1001"}, {"/m", "acme", "1a"}} {
		if got := VoicemailStorageDir(bad[0], bad[1], bad[2]); got != "" {
			t.Errorf("%v: %q", bad, got)
		}
	}
}

func TestFaxNames(t *testing.T) {
	const call = "3f06c297-f992-4dec-b167-d6b803ecf73e"
	if got := FaxPath("acme", 8, call); got != "acme/8/"+call {
		t.Fatalf("FaxPath = %q", got)
	}
	for _, bad := range []string{"", "${uuid}", "3f06c297-f992-4dec-b167-d6b803ecf73", "3f06c297xf992-4dec-b167-d6b803ecf73e"} {
		if ValidCallUUID(bad) {
			t.Errorf("%q taken for a call id", bad)
		}
	}
	if !ValidCallUUID(call) || !ValidCallUUID("3F06C297-F992-4DEC-B167-D6B803ECF73E") {
		t.Fatal("call id refused")
	}
}

package dialplan

import (
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

func TestFaxUploadURLSignedPerCall(t *testing.T) {
	const call = "3f06c297-f992-4dec-b167-d6b803ecf73e"
	url := testMedia.FaxUploadURL("acme", 8, call)
	path := naming.FaxPath("acme", 8, call)
	sig := testMedia.SignFax(path)
	if url != "https://sb.example/fs/fax/"+path+"?sig="+sig {
		t.Fatalf("url %q", url)
	}
	if !testMedia.VerifyFax(path, sig) {
		t.Fatal("own signature refused")
	}
	for _, other := range []string{naming.FaxPath("acme", 8, "3f06c297-f992-4dec-b167-d6b803ecf73f"), naming.FaxPath("acme", 9, call), naming.FaxPath("beta", 8, call)} {
		if testMedia.VerifyFax(other, sig) {
			t.Fatalf("signature of %s opens %s", path, other)
		}
	}
	// A media file's signature is no upload credential, and back.
	if testMedia.VerifyFax(path, testMedia.Sign(path)) || testMedia.Verify(path, sig) {
		t.Fatal("media and fax signatures are interchangeable")
	}
	for _, bad := range []string{"", "${uuid}", "3f06c297-f992-4dec-b167-d6b803ecf73", "3f06c297xf992-4dec-b167-d6b803ecf73e"} {
		if testMedia.FaxUploadURL("acme", 8, bad) != "" {
			t.Fatalf("call id %q rendered", bad)
		}
	}
	if (MediaURLs{Base: "https://sb.example/files", Key: testMedia.Key}).FaxUploadURL("acme", 8, call) != "" {
		t.Fatal("a base that is not /media gave an upload URL")
	}
}

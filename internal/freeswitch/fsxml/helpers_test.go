package fsxml_test

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// capture returns the form body of a real mod_xml_curl request.
func capture(t testing.TB, prefix string) []byte {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("..", "xmlcurl", "testdata", "captures", prefix+"-*.http"))
	if err != nil || len(matches) != 1 {
		t.Fatalf("capture %s: %v %v", prefix, matches, err)
	}
	raw, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("capture %s: no body", prefix)
	}
	return body
}

// post sends a form body to /fs/xml the way mod_xml_curl does.
func post(t testing.TB, s *apptest.Server, body []byte, user, pass string) *apptest.Response {
	t.Helper()
	req, err := http.NewRequest("POST", s.URL+"/fs/xml", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "freeswitch-xml/1.0")
	if user != "" {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	return s.Send(t, req)
}

// fetchXML posts and expects a 200 text/xml answer.
func fetchXML(t testing.TB, s *apptest.Server, body []byte) node {
	t.Helper()
	r := post(t, s, body, "", "").Expect(t, 200)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/xml") {
		t.Fatalf("content type %q", ct)
	}
	return parse(t, r.Body)
}

// node is a decoded XML element.
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []node     `xml:",any"`
	raw      []byte
}

func parse(t testing.TB, doc []byte) node {
	t.Helper()
	var n node
	if err := xml.Unmarshal(doc, &n); err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	n.raw = doc
	return n
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// all returns every element with the tag, depth first.
func (n node) all(tag string) []node {
	var out []node
	if n.XMLName.Local == tag {
		out = append(out, n)
	}
	for _, c := range n.Children {
		out = append(out, c.all(tag)...)
	}
	return out
}

// param is the value of the <param>/<variable> named name ("" if none).
func (n node) param(tag, name string) string {
	for _, p := range n.all(tag) {
		if p.attr("name") == name {
			return p.attr("value")
		}
	}
	return ""
}

// actions lists "application data" of every action in order.
func (n node) actions() []string {
	var out []string
	for _, a := range n.all("action") {
		out = append(out, strings.TrimSpace(a.attr("application")+" "+a.attr("data")))
	}
	return out
}

// notFound reports whether the document is FreeSWITCH's "not found" result.
func (n node) notFound() bool {
	rs := n.all("result")
	return len(rs) == 1 && rs[0].attr("status") == "not found"
}

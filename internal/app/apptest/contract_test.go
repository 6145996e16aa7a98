package apptest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the errors a check reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// contractDoc documents one object: POST creates it (name required), GET
// lists them with X-Total-Count.
const contractDoc = `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{
 "/api/things/":{
  "post":{"operationId":"createThing","requestBody":{"required":true,"content":{"application/json":{"schema":{"type":"object","required":["name"],"additionalProperties":false,"properties":{"name":{"type":"string"}}}}}},
   "responses":{"201":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Thing"}}}},"default":{"description":"e","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Error"}}}}}},
  "get":{"operationId":"listThings","responses":{"200":{"description":"ok","headers":{"X-Total-Count":{"required":true,"schema":{"type":"integer"}}},"content":{"application/json":{"schema":{"type":"array","items":{"$ref":"#/components/schemas/Thing"}}}}}}}}},
 "components":{"schemas":{
  "Thing":{"type":"object","required":["name","colour"],"additionalProperties":false,"properties":{"name":{"type":"string"},"colour":{"type":["string","null"],"enum":["red","blue",null]}}},
  "Error":{"type":"object","required":["error","code"],"properties":{"error":{"type":"string"},"code":{"type":"string"}}}}}}`

// TestContractCatchesMismatches runs the checker against a small server
// whose answers are chosen per request, and checks what it reports.
func TestContractCatchesMismatches(t *testing.T) {
	var status int
	var body string
	header := http.Header{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/openapi.json" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, contractDoc)
			return
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	defer ts.Close()
	s := &Server{URL: ts.URL}

	cases := []struct {
		name         string
		method, path string
		send         any
		status       int
		answer       string
		total        string
		want         string // "" = no report; else a part of the report
	}{
		{"true exchange", "POST", "/api/things/", map[string]any{"name": "a"}, 201, `{"name":"a","colour":null}`, "", ""},
		{"answer with an undeclared field", "POST", "/api/things/", map[string]any{"name": "a"}, 201, `{"name":"a","colour":"red","secret":"x"}`, "", "does not match the document"},
		{"answer with null outside the enum", "POST", "/api/things/", map[string]any{"name": "a"}, 201, `{"name":"a","colour":"green"}`, "", "does not match the document"},
		{"answer missing a required field", "POST", "/api/things/", map[string]any{"name": "a"}, 201, `{"name":"a"}`, "", "does not match the document"},
		{"forbidden request accepted", "POST", "/api/things/", map[string]any{"colour": "red"}, 201, `{"name":"a","colour":"red"}`, "", "a request the document forbids"},
		{"forbidden request refused", "POST", "/api/things/", map[string]any{"colour": "red"}, 400, `{"error":"invalid input","code":"validation_failed"}`, "", ""},
		{"error not in the Error shape", "POST", "/api/things/", map[string]any{"colour": "red"}, 400, `{"message":"bad"}`, "", "does not match the document"},
		{"list with its total", "GET", "/api/things/", nil, 200, `[]`, "0", ""},
		{"list without its total", "GET", "/api/things/", nil, 200, `[]`, "", "does not match the document"},
		{"undocumented path served", "GET", "/api/other", nil, 200, `{}`, "", "not in the document"},
		{"undocumented path refused", "GET", "/api/other", nil, 404, `{"error":"no route for GET /api/other","code":"not_found"}`, "", ""},
		{"exempt raw channel id", "GET", "/api/telephony/channels/SIP/1001-acme-00000001", nil, 200, `{}`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body = c.status, c.answer
			header = http.Header{}
			if c.total != "" {
				header.Set("X-Total-Count", c.total)
			}
			rec := &recorder{TB: t}
			s.Do(rec, c.method, c.path, "", c.send)
			got := strings.Join(rec.errs, "\n")
			switch {
			case c.want == "" && got != "":
				t.Errorf("reported a true exchange:\n%s", got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("want a report containing %q, got %q", c.want, got)
			}
		})
	}
}

// withServer is contractDoc naming one server URL.
func withServer(url string) []byte {
	return []byte(strings.Replace(contractDoc, `"paths":{`, `"servers":[{"url":"`+url+`"}],"paths":{`, 1))
}

// Servers that differ only in their address (each test server names the
// random one it listens on) share one validator; a base path is kept, and
// requests under it are still matched to the document's paths.
func TestContractSharedAcrossServerAddresses(t *testing.T) {
	a, err := newContract(withServer("http://127.0.0.1:40001"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := newContract(withServer("https://switchboard.example.net"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("documents that differ only in their server's address built two validators")
	}
	based, err := newContract(withServer("http://127.0.0.1:40002/base"))
	if err != nil {
		t.Fatal(err)
	}
	if based == a {
		t.Error("a document with a base path shares the validator of one without")
	}
	req := httptest.NewRequest("GET", "http://127.0.0.1:40002/base/api/things/", nil)
	if _, errs := based.v.ValidateHttpRequestSync(req); pathMissing(errs) {
		t.Errorf("a request under the base path is not matched: %s", describe(errs))
	}
	req = httptest.NewRequest("GET", "http://127.0.0.1:40002/base/api/other", nil)
	if _, errs := based.v.ValidateHttpRequestSync(req); !pathMissing(errs) {
		t.Error("an undocumented path under the base path is matched")
	}
}

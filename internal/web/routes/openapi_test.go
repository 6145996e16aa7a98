package routes_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/racecheck"
)

// TestOpenAPIDocumentIsValid checks the served document with an OpenAPI 3.1
// validator and checks that it lists only routes the server really serves.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	if racecheck.Enabled {
		// Validating the whole document is CPU work only (most of a minute
		// under the race detector): make test runs it in its non-race pass.
		t.Skip("run without -race")
	}
	t.Parallel()
	s := apptest.Start(t, apptest.AnyEnv(t), nil)
	raw := s.Do(t, "GET", "/api/openapi.json", "", nil).Expect(t, 200).Body
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("openapi version %q", v)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("invalid: %s (%s)", e.Message, e.Reason)
		}
	}
	s.Do(t, "GET", "/api/openapi.yaml", "", nil).Expect(t, 200)

	var spec struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]any `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			SecuritySchemes map[string]any `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Components.SecuritySchemes["apiKey"] == nil || spec.Components.SecuritySchemes["basicAuth"] == nil {
		t.Errorf("security schemes: %v", spec.Components.SecuritySchemes)
	}
	for _, must := range []string{"/api/tenants/", "/api/tenants/{tenant}/extensions/", "/api/tenants/{tenant}/extensions/{key}", "/api/key/", "/api/key/{id}",
		"/api/messaging/send", "/api/messaging/messages", "/api/messaging/messages/{id}", "/integration/messaging/{provider}/{channel_id}"} {
		if spec.Paths[must] == nil {
			t.Errorf("document lacks %s", must)
		}
	}
	// Every documented operation is served: the router's "no route" 404
	// would name the path; any other answer (even 400/404 for the
	// placeholder values) shows the route exists. A body goes only where
	// the operation declares one, in the content type it declares.
	for path, ops := range spec.Paths {
		for method, op := range ops {
			if strings.HasPrefix(path, "/integration/") {
				continue // provider callbacks: exempt from the contract check (apptest)
			}
			p := strings.NewReplacer("{tenant}", "nosuch_t", "{key}", "1", "{id}", "1", "{extension}", "1001", "{name}", "1001").Replace(path)
			req, err := http.NewRequest(strings.ToUpper(method), s.URL+p, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-API-Key", s.Key)
			for ct := range op.RequestBody.Content {
				req.Body = io.NopCloser(strings.NewReader(map[bool]string{true: "{}", false: ""}[ct == "application/json"]))
				req.Header.Set("Content-Type", ct)
			}
			r := s.Send(t, req)
			if r.Status == http.StatusNotFound && strings.Contains(string(r.Body), "no route for") {
				t.Errorf("%s %s is documented but not served", strings.ToUpper(method), path)
			}
		}
	}
}

// TestOpenAPIDocumentIsTrueToTheServer covers what was seen on real
// traffic: PUT schemas requiring name, null answers where the schema said
// object or enum, create answers carrying secrets the schema forbade, and
// a channel path with * in its operation id. The exchanges below are also
// checked against the document by apptest; the document itself is
// inspected for the shapes a generated client depends on.
func TestOpenAPIDocumentIsTrueToTheServer(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "truth")
		base := "/api/tenants/" + tenant + "/extensions/"
		created := s.Do(t, "POST", base, s.Key, map[string]any{"name": "1001", "first_name": "Eve"}).Expect(t, 201).Map(t)
		if created["sip_secret"] == nil || created["voicemail_pin"] == nil {
			t.Fatalf("create answer lacks its one-time secrets: %v", created)
		}
		// PUT takes any subset: no name.
		s.Do(t, "PUT", base+"1001", s.Key, map[string]any{"last_name": "Smith", "forward_busy": nil, "record": nil}).Expect(t, 200)
		got := s.Do(t, "GET", base+"1001", s.Key, nil).Expect(t, 200).Map(t)
		if got["forward_all"] != nil || got["record"] != nil {
			t.Fatalf("expected null forward_all and record: %v", got)
		}
		clone := storetest.Name("clone")
		cl := s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": clone, "tenant_to_clone": tenant, "tenant_routes": "1"}).Expect(t, 201).Map(t)
		if _, ok := cl["clone_report"]; !ok {
			t.Fatalf("clone answer lacks clone_report: %v", cl)
		}
	})

	s := apptest.Start(t, apptest.AnyEnv(t), nil)
	var doc struct {
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	s.Do(t, "GET", "/api/openapi.json", "", nil).Expect(t, 200).JSON(t, &doc)
	schema := func(name string) map[string]any {
		sch := doc.Components.Schemas[name]
		if sch == nil {
			t.Fatalf("no schema %s", name)
		}
		return sch
	}
	props := func(name string) map[string]any { return schema(name)["properties"].(map[string]any) }
	nullable := func(sch any) bool {
		types, _ := sch.(map[string]any)["type"].([]any)
		return slices.Contains(types, any("null"))
	}

	t.Run("update schemas require nothing and take no read-only or fixed field", func(t *testing.T) {
		for name, sch := range doc.Components.Schemas {
			if !strings.HasSuffix(name, "Update") {
				continue
			}
			if sch["required"] != nil {
				t.Errorf("%s requires %v", name, sch["required"])
			}
			for p, ps := range sch["properties"].(map[string]any) {
				if ps.(map[string]any)["readOnly"] == true {
					t.Errorf("%s takes the read-only %s", name, p)
				}
			}
		}
		if props("TenantUpdate")["tenant"] != nil || props("TenantUpdate")["tenant_to_clone"] != nil {
			t.Errorf("TenantUpdate takes the immutable tenant or the create-only tenant_to_clone")
		}
		put := doc.Paths["/api/tenants/{tenant}/extensions/{key}"]["put"]
		if ref := put["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["$ref"]; ref != "#/components/schemas/ExtensionUpdate" {
			t.Errorf("PUT extension takes %v", ref)
		}
	})

	t.Run("fields answered as null are nullable", func(t *testing.T) {
		ext := props("Extension")
		for _, f := range []string{"forward_all", "forward_busy", "forward_no_answer", "forward_unregistered", "record"} {
			if !nullable(ext[f]) {
				t.Errorf("Extension.%s is not nullable: %v", f, ext[f])
			}
		}
		if enum, _ := ext["record"].(map[string]any)["enum"].([]any); !slices.Contains(enum, nil) {
			t.Errorf("Extension.record's enum refuses null: %v", enum)
		}
	})

	t.Run("create answers declare their one-time secrets", func(t *testing.T) {
		for _, f := range []string{"sip_secret", "voicemail_pin"} {
			if props("ExtensionCreated")[f] == nil {
				t.Errorf("ExtensionCreated lacks %s", f)
			}
			if props("Extension")[f] != nil || props("ExtensionUpdate")[f] == nil {
				t.Errorf("%s: answered by reads or not changeable", f)
			}
		}
		if props("TenantCreated")["clone_report"] == nil {
			t.Errorf("TenantCreated lacks clone_report")
		}
		post := doc.Paths["/api/tenants/{tenant}/extensions/"]["post"]
		if ref := post["responses"].(map[string]any)["201"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["$ref"]; ref != "#/components/schemas/ExtensionCreated" {
			t.Errorf("POST extension answers %v", ref)
		}
	})

	t.Run("writes a limit can refuse document 422", func(t *testing.T) {
		limited := [][2]string{{"/api/tenants/", "post"}, {"/api/tenants/{key}", "put"}}
		for _, res := range []string{"extensions", "queues", "ivr_menus", "conference_rooms"} {
			limited = append(limited, [2]string{"/api/tenants/{tenant}/" + res + "/", "post"})
		}
		for _, pm := range limited {
			resp, _ := doc.Paths[pm[0]][pm[1]]["responses"].(map[string]any)["422"].(map[string]any)
			if d, _ := resp["description"].(string); !strings.Contains(d, "tenant_limit_reached") || resp["$ref"] != "#/components/responses/Error" {
				t.Errorf("%s %s: 422 %v", pm[1], pm[0], resp)
			}
		}
		if _, ok := doc.Paths["/api/tenants/{tenant}/voice_prompts/"]["post"]["responses"].(map[string]any)["422"]; ok {
			t.Errorf("an unlimited resource documents the limit refusal")
		}
	})

	t.Run("operation ids and paths are generator-safe", func(t *testing.T) {
		ident := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
		seen := map[string]string{}
		for path, ops := range doc.Paths {
			if strings.ContainsAny(path, "*:") {
				t.Errorf("path %s", path)
			}
			for method, op := range ops {
				id, _ := op["operationId"].(string)
				if !ident.MatchString(id) {
					t.Errorf("%s %s: operation id %q", method, path, id)
				}
				if other, dup := seen[id]; dup {
					t.Errorf("operation id %s on %s %s and %s", id, method, path, other)
				}
				seen[id] = method + " " + path
			}
		}
		ch := doc.Paths["/api/telephony/channels/{id}"]["get"]
		if ch == nil || ch["operationId"] != "get_api_telephony_channels_by_id" {
			t.Fatalf("channel operation: %v", ch)
		}
		params, _ := ch["parameters"].([]any)
		if len(params) == 0 || params[0].(map[string]any)["name"] != "id" || params[0].(map[string]any)["in"] != "path" {
			t.Errorf("channel parameters: %v", params)
		}
	})

	t.Run("every error is the Error schema and lists carry their headers", func(t *testing.T) {
		for path, ops := range doc.Paths {
			for method, op := range ops {
				responses := op["responses"].(map[string]any)
				for status, r := range responses {
					if strings.HasPrefix(path, "/readyz") && status == "503" {
						continue // not ready: the Health body naming the failing check
					}
					if strings.HasPrefix(path, "/integration/webhooks/") && status != "default" {
						continue // Slack's plain-text codes, or the Error shape with Accept: application/json
					}
					want := "#/components/responses/Error"
					if status == "default" {
						want = "#/components/responses/OtherError" // the Error schema, with Retry-After
					}
					if status == "default" || status >= "400" {
						if r.(map[string]any)["$ref"] != want && !pageError(r) {
							t.Errorf("%s %s: %s answer is not the %s response", method, path, status, want)
						}
					}
				}
				if responses["default"] == nil {
					t.Errorf("%s %s: no default (error) answer", method, path)
				}
				if params, _ := op["parameters"].([]any); slices.ContainsFunc(params, func(p any) bool { return p.(map[string]any)["name"] == "limit" }) {
					headers, _ := responses["200"].(map[string]any)["headers"].(map[string]any)
					if headers["X-Total-Count"] == nil || headers["Link"] == nil {
						t.Errorf("%s %s: list without X-Total-Count and Link: %v", method, path, headers)
					}
				}
			}
		}
	})
}

// pageError reports whether an answer is a page's: the form again as HTML,
// or the Error shape as JSON.
func pageError(r any) bool {
	content, _ := r.(map[string]any)["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	schema, _ := js["schema"].(map[string]any)
	return content["text/html"] != nil && len(content) == 2 && schema["$ref"] == "#/components/schemas/Error"
}

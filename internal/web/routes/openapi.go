package routes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/switchboard/switchboard/internal/models"
)

// openAPIDoc is the document, built and rendered on first request: most
// processes, and most test servers, never ask, and built it held some 4
// MB of maps for the life of every process (issue 28). Once rendered only
// its JSON is kept. Its declarations are checked as it is built (clashing
// names, unknown schemas: programming errors), which every test that
// checks answers against the document does.
type openAPIDoc struct {
	json, yaml func() []byte
}

func newOpenAPIDoc(build func() obj) *openAPIDoc {
	d := &openAPIDoc{}
	d.json = sync.OnceValue(func() []byte {
		js, err := json.Marshal(build())
		if err != nil {
			panic(fmt.Sprintf("openapi: %v", err)) // built from our own literals: a bug, not input
		}
		return js
	})
	d.yaml = sync.OnceValue(func() []byte {
		var generic any
		_ = json.Unmarshal(d.json(), &generic)
		ym, err := yaml.Marshal(generic)
		if err != nil {
			panic(fmt.Sprintf("openapi yaml: %v", err))
		}
		return ym
	})
	return d
}

type obj = map[string]any

// openAPIDocument is the OpenAPI 3.1 document of the same route table that
// registers the routes and of the registry's fields, so it can never list
// a route the server does not serve. The HTTP tests check every request
// and answer against it (app/apptest/contract.go).
func openAPIDocument(routes []Route, resources []*models.Resource, baseURL string, extra map[string]any) *openAPIDoc {
	return newOpenAPIDoc(func() obj { return buildOpenAPIDocument(routes, resources, baseURL, extra) })
}

func buildOpenAPIDocument(routes []Route, resources []*models.Resource, baseURL string, extra map[string]any) obj {
	schemas := obj{
		"Error": obj{"type": "object", "required": []string{"error", "code"}, "additionalProperties": false, "properties": obj{
			"error":  obj{"type": "string", "description": "what went wrong, for people"},
			"code":   obj{"type": "string", "description": "what went wrong, for programs (validation_failed, not_found, conflict, …)"},
			"fields": obj{"type": "object", "additionalProperties": obj{"type": "string"}, "description": "each invalid field with the reason"},
		}},
		"Health": obj{"type": "object", "required": []string{"status"}, "properties": obj{
			"status":       obj{"type": "string"},
			"checks":       obj{"type": "object", "additionalProperties": obj{"type": "string"}, "description": "each dependency: ok or the error"},
			"outbox_depth": obj{"type": "integer", "description": "committed changes some subscriber has not handled yet"},
		}},
	}
	add := func(name string, sch any) {
		if _, dup := schemas[name]; dup {
			panic("openapi: two schemas named " + name) // declarations clash: a bug, caught by any test
		}
		schemas[name] = sch
	}
	for _, res := range resources {
		if res.Custom() {
			continue
		}
		part := obj{}
		addResourceSchemas(res, part)
		for name, sch := range part {
			add(name, sch)
		}
	}
	for name, sch := range extraSchemas {
		add(name, sch)
	}
	for name, sch := range mfaSchemas {
		schemas[name] = sch
	}
	for name, sch := range webSchemas {
		add(name, sch)
	}
	for name, sch := range agentSchemas() {
		add(name, sch)
	}
	for name, sch := range extra {
		add(name, sch)
	}
	paths := obj{}
	ids := map[string]string{}
	for _, r := range routes {
		p := openAPIPath(r)
		item, _ := paths[p].(obj)
		if item == nil {
			item = obj{}
			paths[p] = item
		}
		op := operation(r, schemas)
		id := op["operationId"].(string)
		if other, dup := ids[id]; dup {
			panic("openapi: operation id " + id + " of " + r.Method + " " + p + " is also " + other)
		}
		ids[id] = r.Method + " " + p
		item[strings.ToLower(r.Method)] = op
	}
	tags, groups := documentTags(paths, resources)
	doc := obj{
		"openapi":     "3.1.0",
		"tags":        tags,
		"x-tagGroups": groups,
		"info": obj{
			"title":   "Switchboard API",
			"version": "1.0.0",
			"description": "Multi-tenant control plane for FreeSWITCH: configuration, FreeSWITCH XML, live calls. " +
				"Errors are {error, code[, fields]}: 401 unauthorized (missing, invalid or revoked credentials) or api_key_required " +
				"(an Authorization header on an endpoint that takes X-API-Key only), 403 forbidden, 404 not_found, " +
				"405 method_not_allowed with an Allow header, 400 validation_failed with each field's reason in words.",
		},
		"servers": []obj{{"url": baseURL}},
		"paths":   paths,
		"components": obj{
			"schemas": schemas,
			"responses": obj{
				"Error": obj{"description": "the request was refused or failed", "content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}}},
				// The default answer: the statuses no route names (413, 429,
				// 5xx), the ones a client may retry among them.
				"OtherError": obj{"description": "any other refusal or failure (413, 429, 5xx)", "content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}},
					"headers": obj{"Retry-After": obj{"description": "on 429, and on 503 while a chat server or FreeSWITCH node is down: seconds to wait before trying again", "schema": obj{"type": "integer", "minimum": 1}}}},
			},
			"securitySchemes": obj{
				"apiKey":    obj{"type": "apiKey", "in": "header", "name": "X-API-Key"},
				"basicAuth": obj{"type": "http", "scheme": "basic"},
				"sessionCookie": obj{"type": "apiKey", "in": "cookie", "name": SessionCookie,
					"description": "an administrator's browser session from POST /login; requests that change something also send the session's token (GET /session → csrf_token) in the " + CSRFHeader + " header"},
			},
		},
	}
	return doc
}

// openAPIPath turns a Fiber path into an OpenAPI one: :name becomes
// {name}, a trailing * the parameter the route names in Wildcard.
func openAPIPath(r Route) string {
	parts := strings.Split(r.Path, "/")
	for i, part := range parts {
		switch {
		case strings.HasPrefix(part, ":"):
			parts[i] = "{" + strings.TrimPrefix(part, ":") + "}"
		case part == "*" && r.Wildcard != "":
			parts[i] = "{" + r.Wildcard + "}"
		}
	}
	return strings.Join(parts, "/")
}

func pathParams(r Route) []string {
	var names []string
	for _, part := range strings.Split(r.Path, "/") {
		switch {
		case strings.HasPrefix(part, ":"):
			names = append(names, part[1:])
		case part == "*" && r.Wildcard != "":
			names = append(names, r.Wildcard)
		}
	}
	return names
}

// paged reports whether a route answers a page of a list (sendPage):
// those take limit and offset and set X-Total-Count and Link.
func paged(r Route) bool {
	for _, q := range r.Query {
		if q == "limit" {
			return true
		}
	}
	return false
}

func operation(r Route, schemas obj) obj {
	op := obj{
		"summary":     r.Summary,
		"tags":        []string{r.Tag},
		"operationId": operationID(r),
	}
	var params []obj
	for _, name := range pathParams(r) {
		p := obj{"name": name, "in": "path", "required": true, "schema": obj{"type": "string"}}
		if name == r.Wildcard {
			p["description"] = "URL-encoded (it may contain /)"
		}
		params = append(params, p)
	}
	for _, q := range r.Query {
		schema := queryParamSchema(q)
		if r.Resource != nil {
			if ls, ok := listParamSchema(r.Resource, q); ok {
				schema = ls
			}
		}
		params = append(params, obj{"name": q, "in": "query", "required": false, "schema": schema})
	}
	if r.Idempotent {
		params = append(params, obj{"name": "Idempotency-Key", "in": "header", "required": false,
			"description": "a retry with the same key and body gets the first answer instead of acting again (24 h)",
			"schema":      obj{"type": "string", "maxLength": idemMaxKey}})
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	switch r.Auth {
	case AuthAPI:
		op["security"] = []obj{{"apiKey": []string{}}, {"basicAuth": []string{}}, {"sessionCookie": []string{}}}
	case AuthPage:
		// Without a session a page answers too: 303 to the login.
		op["security"] = []obj{{"sessionCookie": []string{}}, {}}
	case AuthSession:
		op["security"] = []obj{{"sessionCookie": []string{}}}
	case AuthKeyOnly:
		op["security"] = []obj{{"apiKey": []string{}}}
	case AuthKeyOrSession:
		op["security"] = []obj{{"apiKey": []string{}}, {"sessionCookie": []string{}}}
	case AuthCustom:
		op["security"] = []obj{{"basicAuth": []string{}}, {}}
	default:
		op["security"] = []obj{}
	}
	reqSchema, respSchema := requestSchema(r), r.Response
	if r.Resource != nil {
		n := schemaNames(r.Resource)
		switch r.Op {
		case "create":
			respSchema = n.Created
		case "update", "get":
			respSchema = n.Read
		case "list":
			respSchema = ""
		}
	}
	if reqSchema != "" {
		consumes := r.Consumes
		if consumes == "" {
			consumes = "application/json"
		}
		// JSON bodies are required (an empty one is refused), except by
		// actions without input (Empty: no body or {}); mod_xml_curl's
		// form may be empty and then gets FreeSWITCH's not-found document.
		content := obj{}
		for _, ct := range strings.Split(consumes, ",") {
			ct = strings.TrimSpace(ct)
			media := obj{"schema": bodySchema(ct, reqSchema, schemas)}
			if ct == formMedia && r.SlackAnswers {
				media["schema"] = obj{"type": "object", "required": []string{"payload"}, "properties": obj{
					"payload": obj{"type": "string", "contentMediaType": "application/json", "contentSchema": schemaRef(reqSchema, schemas),
						"description": "the " + reqSchema + " as JSON (Slack's form post)"}}}
				media["encoding"] = obj{"payload": obj{"allowReserved": true}}
			} else if ct == formMedia {
				media["encoding"] = formEncoding(schemas[reqSchema])
			}
			content[ct] = media
		}
		op["requestBody"] = obj{"required": consumes != formMedia && reqSchema != "Empty", "content": content}
	}
	status := r.Status
	if status == 0 {
		status = 200
	}
	resp := obj{"description": "success"}
	switch {
	case status == http.StatusSeeOther:
		resp["headers"] = obj{"Location": obj{"description": "where the browser goes next", "required": true, "schema": obj{"type": "string"}}}
	case r.Resource != nil && r.Op == "list":
		resp["content"] = obj{"application/json": obj{"schema": obj{"type": "array", "items": obj{"$ref": "#/components/schemas/" + schemaNames(r.Resource).Read}}}}
	case r.Produces == "application/json":
		resp["content"] = obj{r.Produces: obj{"schema": obj{"type": "object"}}}
	case r.Produces != "":
		content := obj{}
		for _, ct := range strings.Split(r.Produces, ",") {
			schema := obj{"type": "string"}
			if ct = strings.TrimSpace(ct); ct == "application/json" {
				schema = obj{} // a JSON file among other kinds (web client assets)
			}
			content[ct] = obj{"schema": schema}
		}
		resp["content"] = content
	case respSchema != "" && status != 204:
		resp["content"] = obj{"application/json": obj{"schema": schemaRef(respSchema, schemas)}}
	}
	if status == 201 {
		resp["headers"] = obj{"Location": obj{"description": "the new object's URL", "schema": obj{"type": "string"}}}
	}
	if paged(r) {
		resp["headers"] = obj{
			"X-Total-Count": obj{"description": "total number of objects in the list", "required": true, "schema": obj{"type": "integer", "minimum": 0}},
			"Link":          obj{"description": `RFC 8288 links to the next and previous pages (rel="next", rel="prev")`, "schema": obj{"type": "string"}},
		}
	}
	responses := obj{fmt.Sprint(status): resp}
	if r.Ranges {
		responses["206"] = obj{"description": "the byte ranges asked for with Range", "content": resp["content"]}
	}
	for st, name := range r.Answers {
		responses[fmt.Sprint(st)] = obj{"description": http.StatusText(st), "content": obj{"application/json": obj{"schema": schemaRef(name, schemas)}}}
	}
	for _, st := range errorStatuses(r, reqSchema != "") {
		responses[fmt.Sprint(st)] = obj{"$ref": "#/components/responses/Error"}
	}
	if r.SlackAnswers {
		for st, codes := range slackRefusals {
			responses[fmt.Sprint(st)] = obj{"description": http.StatusText(st) + ": " + codes, "content": obj{
				"text/plain":       obj{"schema": obj{"type": "string", "description": "Slack's error code: " + codes}},
				"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error", "description": "with Accept: application/json"}},
			}}
		}
		delete(responses, "401")
		delete(responses, "403")
	}
	if r.Auth == AuthPage {
		responses["303"] = obj{"description": "no live session: to the login page", "headers": obj{
			"Location": obj{"description": "/login?next=…", "required": true, "schema": obj{"type": "string"}}}}
	}
	for _, st := range r.HTMLAnswers {
		// A page answered again with the reason (a failed login, a refused
		// form); refusals before the page runs are the Error shape.
		responses[fmt.Sprint(st)] = obj{"description": http.StatusText(st), "content": obj{
			"text/html":        obj{"schema": obj{"type": "string"}},
			"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}},
		}}
	}
	if r.Resource != nil && models.LimitRefuses(r.Resource, r.Op) {
		// OpenAPI 3.1 lets a reference override its description.
		responses["422"] = obj{"$ref": "#/components/responses/Error", "description": "a tenant limit (code tenant_limit_reached) or its reseller's limit " +
			"(code reseller_limit_reached) does not allow the write; the message names the limit and its value, nothing is stored"}
	}
	responses["default"] = obj{"$ref": "#/components/responses/OtherError"}
	op["responses"] = responses
	return op
}

// errorStatuses are the refusals a route documents by name; every other
// failure (413, 429, 5xx) is the default answer, also an Error.
// slackRefusals are the answers of a Slack-compatible endpoint
// (SlackAnswers) other than success, by status, with their codes.
var slackRefusals = map[int]string{
	http.StatusBadRequest:            "invalid_payload, no_text, invalid_blocks, too_many_attachments",
	http.StatusNotFound:              "no_service (no such webhook, or disabled), channel_not_found",
	http.StatusGone:                  "channel_is_archived",
	http.StatusRequestEntityTooLarge: "payload_too_large",
	http.StatusTooManyRequests:       "rate_limited",
	http.StatusInternalServerError:   "rollup_error",
	http.StatusServiceUnavailable:    "chat_unavailable",
}

func errorStatuses(r Route, hasBody bool) []int {
	var out []int
	if hasBody || len(r.Query) > 0 || len(pathParams(r)) > 0 {
		out = append(out, http.StatusBadRequest)
	}
	if r.Auth != AuthNone {
		out = append(out, http.StatusUnauthorized, http.StatusForbidden)
	}
	if len(pathParams(r)) > 0 {
		out = append(out, http.StatusNotFound)
	}
	if r.Resource != nil && (r.Op == "create" || r.Op == "update" || r.Op == "delete") {
		out = append(out, http.StatusConflict)
	}
	return out
}

const formMedia = "application/x-www-form-urlencoded"

// formEncoding lets a form's fields carry any text (a return path, a
// password) percent-encoded: allowReserved on every property.
func formEncoding(schema any) obj {
	enc := obj{}
	if sch, ok := schema.(obj); ok {
		props, _ := sch["properties"].(obj)
		for name := range props {
			enc[name] = obj{"allowReserved": true}
		}
	}
	return enc
}

// bodySchema is the schema of a request body of one content type: the
// named schema, except for uploads (multipart: text fields and the audio
// file part) and bulk files (CSV, JSON Lines: text).
func bodySchema(contentType, name string, schemas obj) obj {
	switch contentType {
	case "multipart/form-data":
		return obj{"type": "object", "description": "the fields of " + name + " as text parts; the audio as a file part named audio",
			"properties":           obj{"audio": obj{"type": "string", "contentMediaType": "application/octet-stream"}},
			"additionalProperties": obj{"type": "string"}}
	case "text/csv", "application/x-ndjson":
		return obj{"type": "string", "description": "one record per line (CSV with a header row naming the " + name + " fields)"}
	}
	return schemaRef(name, schemas)
}

func schemaRef(name string, schemas obj) obj {
	if _, ok := schemas[name]; !ok {
		panic("openapi: no schema named " + name) // a route names a shape nobody declared
	}
	return obj{"$ref": "#/components/schemas/" + name}
}

func queryParamSchema(name string) obj {
	switch name {
	case "limit":
		return obj{"type": "integer", "minimum": 1, "maximum": maxLimit, "default": defaultLimit}
	case "offset":
		return obj{"type": "integer", "minimum": 0, "default": 0}
	case dryRunParam:
		return obj{"type": "boolean", "default": false, "description": "run every check of the write and store nothing"}
	}
	return obj{"type": "string"}
}

var notIdent = regexp.MustCompile(`[^A-Za-z0-9]+`)

// operationID names an operation for client generators: unique, letters,
// digits and underscores only. Generated CRUD reads like the client call
// (listExtensions, createExtension); other routes take their method and
// path, a parameter written by_<name> so /debug/pprof/{profile} and
// /debug/pprof/profile stay apart.
func operationID(r Route) string {
	if r.Resource != nil {
		if r.Op == "list" {
			return "list" + typeName(strings.ReplaceAll(r.Resource.Name, "_", " "))
		}
		return r.Op + typeName(r.Resource.Title)
	}
	parts := strings.Split(r.Path, "/")
	for i, part := range parts {
		switch {
		case strings.HasPrefix(part, ":"):
			parts[i] = "by_" + part[1:]
		case part == "*" && r.Wildcard != "":
			parts[i] = "by_" + r.Wildcard
		}
	}
	return strings.Trim(notIdent.ReplaceAllString(strings.ToLower(r.Method)+"_"+strings.Join(parts, "_"), "_"), "_")
}

// extraSchemas are the shapes of hand-written routes.
var extraSchemas = obj{
	"NoFields": obj{"type": "object", "description": "an action without input: send {} (state-changing requests carry a JSON body); fields are ignored"},
	"APIKeyCreate": obj{"type": "object", "required": []string{"name"}, "additionalProperties": false, "example": obj{"name": "CRM integration"}, "properties": obj{
		"name":        obj{"type": "string", "maxLength": 64},
		"tenant":      obj{"type": "string", "description": "absent: platform key"},
		"extension":   obj{"type": "string", "description": "user key acting as this extension; needs tenant"},
		"permissions": obj{"type": "array", "items": obj{"type": "string", "enum": models.Permissions}},
		"expires_at":  obj{"type": "string", "format": "date-time"},
	}},
	"APIKey": obj{"type": "object", "properties": obj{
		"id": obj{"type": "integer"}, "name": obj{"type": "string"}, "tenant": obj{"type": []string{"string", "null"}},
		"extension": obj{"type": []string{"string", "null"}}, "permissions": obj{"type": "array", "items": obj{"type": "string"}},
		"key_prefix": obj{"type": "string"}, "expires_at": obj{"type": []string{"string", "null"}},
		"last_used_at": obj{"type": []string{"string", "null"}}, "revoked_at": obj{"type": []string{"string", "null"}},
		"created_by": obj{"type": "string"}, "created_at": obj{"type": "string"},
	}},
	"APIKeyCreated": obj{"allOf": []obj{{"$ref": "#/components/schemas/APIKey"}, {"type": "object", "required": []string{"key", "id"}, "properties": obj{
		"key": obj{"type": "string", "description": "the key value; shown only in this response"},
	}}}},
	"APIKeyList": obj{"type": "array", "items": obj{"$ref": "#/components/schemas/APIKey"}},
}

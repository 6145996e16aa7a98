package routes

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/switchboard/switchboard/models"
)

// openAPIDoc is the rendered document, built once at start.
type openAPIDoc struct{ JSON, YAML []byte }

type obj = map[string]any

// openAPIDocument builds the OpenAPI 3.1 document from the same route
// table that registers the routes and from the registry's fields, so it
// can never list a route the server does not serve.
func openAPIDocument(routes []Route, resources []*models.Resource, baseURL string, extra map[string]any) openAPIDoc {
	schemas := obj{
		"Error": obj{"type": "object", "required": []string{"error", "code"}, "properties": obj{
			"error":  obj{"type": "string"},
			"code":   obj{"type": "string"},
			"fields": obj{"type": "object", "additionalProperties": obj{"type": "string"}, "description": "each invalid field with the reason"},
		}},
		"Health": obj{"type": "object", "properties": obj{"status": obj{"type": "string"}, "checks": obj{"type": "object", "additionalProperties": obj{"type": "string"}}, "outbox_depth": obj{"type": "integer", "description": "committed changes some subscriber has not handled yet"}}},
	}
	for _, res := range resources {
		schemas[res.Name] = resourceSchema(res)
	}
	for name, sch := range extraSchemas {
		schemas[name] = sch
	}
	for name, sch := range mfaSchemas {
		schemas[name] = sch
	}
	for name, sch := range extra {
		schemas[name] = sch
	}
	paths := obj{}
	for _, r := range routes {
		p := openAPIPath(r.Path)
		item, _ := paths[p].(obj)
		if item == nil {
			item = obj{}
			paths[p] = item
		}
		item[strings.ToLower(r.Method)] = operation(r, schemas)
	}
	doc := obj{
		"openapi": "3.1.0",
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
			"securitySchemes": obj{
				"apiKey":    obj{"type": "apiKey", "in": "header", "name": "X-API-Key"},
				"basicAuth": obj{"type": "http", "scheme": "basic"},
			},
		},
	}
	js, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("openapi: %v", err)) // built from our own literals: a bug, not input
	}
	var generic any
	_ = json.Unmarshal(js, &generic)
	ym, err := yaml.Marshal(generic)
	if err != nil {
		panic(fmt.Sprintf("openapi yaml: %v", err))
	}
	return openAPIDoc{JSON: js, YAML: ym}
}

func operation(r Route, schemas obj) obj {
	op := obj{
		"summary":     r.Summary,
		"tags":        []string{r.Tag},
		"operationId": operationID(r),
	}
	var params []obj
	for _, seg := range strings.Split(r.Path, "/") {
		if strings.HasPrefix(seg, ":") {
			params = append(params, obj{"name": seg[1:], "in": "path", "required": true, "schema": obj{"type": "string"}})
		}
	}
	for _, q := range r.Query {
		params = append(params, obj{"name": q, "in": "query", "required": false, "schema": queryParamSchema(q)})
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	switch r.Auth {
	case AuthAPI:
		op["security"] = []obj{{"apiKey": []string{}}, {"basicAuth": []string{}}}
	case AuthKeyOnly:
		op["security"] = []obj{{"apiKey": []string{}}}
	case AuthCustom:
		op["security"] = []obj{{"basicAuth": []string{}}}
	default:
		op["security"] = []obj{}
	}
	reqSchema, respSchema := r.Request, r.Response
	if r.Resource != nil {
		ref := r.Resource.Name
		switch r.Op {
		case "create", "update":
			reqSchema, respSchema = ref, ref
		case "get":
			respSchema = ref
		case "list":
			respSchema = ""
		}
	}
	if reqSchema != "" {
		op["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": schemaRef(reqSchema, schemas)}}}
	}
	status := r.Status
	if status == 0 {
		status = 200
	}
	resp := obj{"description": "success"}
	switch {
	case r.Resource != nil && r.Op == "list":
		resp["content"] = obj{"application/json": obj{"schema": obj{"type": "array", "items": obj{"$ref": "#/components/schemas/" + r.Resource.Name}}}}
		resp["headers"] = obj{"X-Total-Count": obj{"description": "total number of objects", "schema": obj{"type": "integer"}}}
	case r.Produces != "":
		resp["content"] = obj{r.Produces: obj{"schema": obj{"type": "string"}}}
	case respSchema != "" && status != 204:
		resp["content"] = obj{"application/json": obj{"schema": schemaRef(respSchema, schemas)}}
	}
	errResp := obj{"description": "error", "content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}}}
	responses := obj{fmt.Sprint(status): resp, "default": errResp}
	op["responses"] = responses
	return op
}

func schemaRef(name string, schemas obj) obj {
	if _, ok := schemas[name]; !ok {
		schemas[name] = obj{"type": "object"}
	}
	return obj{"$ref": "#/components/schemas/" + name}
}

func queryParamSchema(name string) obj {
	switch name {
	case "limit":
		return obj{"type": "integer", "minimum": 1, "maximum": maxLimit, "default": defaultLimit}
	case "offset":
		return obj{"type": "integer", "minimum": 0, "default": 0}
	}
	return obj{"type": "string"}
}

func operationID(r Route) string {
	id := strings.ToLower(r.Method) + strings.NewReplacer("/", "_", ":", "", "{", "", "}", "", ".", "_").Replace(r.Path)
	return strings.TrimRight(id, "_")
}

// resourceSchema is the JSON Schema of one resource, from its fields.
func resourceSchema(res *models.Resource) obj {
	props := obj{}
	var required []string
	if res.HasID() {
		props["id"] = obj{"type": "integer", "readOnly": true}
	}
	for _, f := range res.Fields {
		props[f.Name] = fieldSchema(f)
		if f.Required {
			required = append(required, f.Name)
		}
	}
	props["created_at"] = obj{"type": "string", "format": "date-time", "readOnly": true}
	props["updated_at"] = obj{"type": "string", "format": "date-time", "readOnly": true}
	s := obj{"type": "object", "title": res.Title, "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
	return s
}

func fieldSchema(f *models.Field) obj {
	s := obj{}
	switch f.Type {
	case models.String, models.Time:
		s["type"] = []string{"string", "null"}
		if f.MaxLen > 0 {
			s["maxLength"] = f.MaxLen
		}
		if f.Pattern != "" {
			s["pattern"] = f.Pattern
		}
		if len(f.Enum) > 0 {
			s["enum"] = f.Enum
		}
		if f.Type == models.Time {
			s["format"] = "date-time"
		}
	case models.Int:
		s["type"] = []string{"integer", "null"}
		if f.HasRange {
			s["minimum"], s["maximum"] = f.Min, f.Max
		}
	case models.Number:
		s["type"] = []string{"number", "null"}
	case models.Bool:
		s["type"] = "boolean"
	case models.StringList, models.IntList:
		item := obj{"type": "string"}
		if f.Type == models.IntList {
			item = obj{"type": "integer"}
		}
		if f.Pattern != "" {
			item["pattern"] = f.Pattern
		}
		if len(f.Enum) > 0 {
			item["enum"] = f.Enum
		}
		s["type"] = []string{"array", "null"}
		s["items"] = item
		if f.MaxItems > 0 {
			s["maxItems"] = f.MaxItems
		}
	case models.Object, models.ObjectList:
		props := obj{}
		var req []string
		for _, p := range f.Props {
			props[p.Name] = fieldSchema(p)
			if p.Required {
				req = append(req, p.Name)
			}
		}
		o := obj{"type": "object", "properties": props, "additionalProperties": false}
		if len(req) > 0 {
			o["required"] = req
		}
		if f.Type == models.Object {
			s = o
		} else {
			s["type"] = []string{"array", "null"}
			s["items"] = o
			if f.MaxItems > 0 {
				s["maxItems"] = f.MaxItems
			}
		}
	case models.Map:
		s["type"] = []string{"object", "null"}
		s["additionalProperties"] = true
		if f.MaxItems > 0 {
			s["maxProperties"] = f.MaxItems
		}
	case models.Destination:
		s["type"] = []string{"object", "null"}
		s["properties"] = obj{"type": obj{"type": "string", "enum": models.DestinationTypes()}, "target": obj{"type": "string"}}
		s["required"] = []string{"type"}
	}
	if f.Doc != "" {
		s["description"] = f.Doc
	}
	if f.Default != nil {
		s["default"] = f.Default
	}
	if f.ReadOnly {
		s["readOnly"] = true
	}
	if f.Secret != models.NotSecret || f.Input {
		s["writeOnly"] = true
	}
	return s
}

// extraSchemas are the shapes of hand-written routes.
var extraSchemas = obj{
	"APIKeyCreate": obj{"type": "object", "required": []string{"name"}, "additionalProperties": false, "properties": obj{
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

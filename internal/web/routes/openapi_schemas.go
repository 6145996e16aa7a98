package routes

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/switchboard/switchboard/internal/models"
)

// A resource is documented by up to four schemas, because what a client
// sends and what it gets back differ:
//
//	<Type>         what GET, PUT and lists answer: every stored field except
//	               secrets, always present (null where the field is empty)
//	<Type>Create   what POST accepts: writable fields, secrets and
//	               create-only inputs; required are the fields without
//	               a default or a generated value
//	<Type>Update   what PUT accepts: any subset of the changeable fields
//	<Type>Created  what POST answers: <Type> plus the secrets shown once
//	               and what the create hook reports (tenant clone report)
//
// Singletons have only <Type> and <Type>Update.
type resourceSchemaNames struct{ Read, Create, Update, Created string }

func schemaNames(res *models.Resource) resourceSchemaNames {
	t := typeName(res.Title)
	return resourceSchemaNames{Read: t, Create: t + "Create", Update: t + "Update", Created: t + "Created"}
}

// typeName turns a title ("SIP trunk", "click-to-call widget") into a
// generator-friendly type name (SIPTrunk, ClickToCallWidget).
func typeName(title string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(title, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

// addResourceSchemas puts a resource's schemas into schemas.
func addResourceSchemas(res *models.Resource, schemas obj) {
	n := schemaNames(res)
	readProps, readReq := obj{}, []string{}
	if res.HasID() {
		readProps["id"] = obj{"type": "integer", "readOnly": true}
		readReq = append(readReq, "id")
	}
	createProps, createReq := obj{}, []string{}
	updateProps := obj{}
	var secrets []*models.Field
	for _, f := range res.Fields {
		switch {
		case f.Stored() && f.Secret == models.NotSecret:
			readProps[f.Name] = fieldSchema(f, answer)
			readReq = append(readReq, f.Name)
		case f.Masked:
			// Write-only values answered masked ("****" and the last four
			// characters at most), the create answer included.
			readProps[f.Name] = obj{"type": []string{"object", "null"}, "additionalProperties": obj{"type": "string"},
				"description": strings.TrimSpace(f.Doc + " (write-only: each value answered as **** and its last four characters at most)")}
			readReq = append(readReq, f.Name)
		}
		if (f.Secret == models.Encrypted || f.Secret == models.Digest) && !f.Masked {
			secrets = append(secrets, f)
		}
		if f.ReadOnly {
			continue
		}
		createProps[f.Name] = requestFieldSchema(res, f)
		if f.Required && f.Generate == nil && f.Default == nil {
			createReq = append(createReq, f.Name)
		}
		if !f.Immutable && !f.Input {
			updateProps[f.Name] = requestFieldSchema(res, f)
		}
	}
	for _, ts := range []string{"created_at", "updated_at"} {
		readProps[ts] = obj{"type": "string", "format": "date-time", "readOnly": true}
		readReq = append(readReq, ts)
	}
	schemas[n.Read] = objectSchema(res.Title, readProps, readReq)
	schemas[n.Update] = objectSchema(res.Title+": any subset of the changeable fields", updateProps, nil)
	if res.Singleton {
		return
	}
	create := objectSchema("new "+res.Title, createProps, createReq)
	// What "Try it out" starts from: a body the server accepts (once the
	// objects it refers to exist), derived from the declarations.
	create["example"], _ = res.CreateExample()
	schemas[n.Create] = create
	createdProps := obj{}
	for k, v := range readProps {
		createdProps[k] = v
	}
	for _, f := range secrets {
		s := fieldSchema(f, answer)
		s["description"] = strings.TrimSpace(f.Doc + " (shown only in this answer)")
		createdProps[f.Name] = s
	}
	for _, f := range res.CreateAnswer {
		createdProps[f.Name] = fieldSchema(f, answer)
	}
	schemas[n.Created] = objectSchema("created "+res.Title+", with the secrets shown only once", createdProps, readReq)
}

// requestFieldSchema is what create and update take for f: its schema,
// with how national phone numbers are read where they are.
func requestFieldSchema(res *models.Resource, f *models.Field) obj {
	s := fieldSchema(f, request)
	if note := res.NationalNumberNote(f); note != "" {
		if f.Doc != "" {
			note = strings.TrimSuffix(f.Doc, ".") + ". " + note
		}
		s["description"] = note
	}
	return s
}

func objectSchema(title string, props obj, required []string) obj {
	s := obj{"type": "object", "title": title, "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
	return s
}

// direction says whether a schema describes what clients send or what the
// server answers: some values are taken loosely and answered normalised.
type direction bool

const (
	request direction = true
	answer  direction = false
)

// fieldSchema is the JSON Schema of one field's value. A field the server
// lets be null (every field that is neither required nor boolean, and
// every member of an object that is not required) is nullable, in requests
// and answers alike.
func fieldSchema(f *models.Field, dir direction) obj {
	return valueSchema(f, !f.Required && f.Type != models.Bool, dir)
}

func valueSchema(f *models.Field, nullable bool, dir direction) obj {
	s := obj{}
	typ := func(t string) any {
		if nullable {
			return []string{t, "null"}
		}
		return t
	}
	switch f.Type {
	case models.String, models.Time:
		s["type"] = typ("string")
		stringBounds(f, s, nullable, dir)
		if f.Type == models.Time {
			s["format"] = "date-time"
		}
	case models.Int:
		s["type"] = typ("integer")
		if f.HasRange {
			s["minimum"], s["maximum"] = f.Min, f.Max
		} else if f.Ref != "" {
			s["minimum"] = 1
		}
	case models.Number:
		s["type"] = typ("number")
	case models.Bool:
		s["type"] = typ("boolean")
	case models.StringList, models.IntList:
		item := obj{"type": "integer"}
		if f.Type == models.StringList {
			item = obj{"type": "string"}
			stringBounds(f, item, false, dir)
		}
		s["type"] = typ("array")
		s["items"] = item
		if f.MaxItems > 0 {
			s["maxItems"] = f.MaxItems
		}
		if f.Required {
			s["minItems"] = 1
		}
	case models.Object:
		s = objectPropsSchema(f.Props, dir)
		s["type"] = typ("object")
	case models.ObjectList:
		s["type"] = typ("array")
		s["items"] = objectPropsSchema(f.Props, dir)
		if f.MaxItems > 0 {
			s["maxItems"] = f.MaxItems
		}
		if f.Required {
			s["minItems"] = 1
		}
	case models.Map:
		maxKeys := f.MaxItems
		if maxKeys == 0 {
			maxKeys = models.DefaultMapKeys
		}
		s["type"] = typ("object")
		s["maxProperties"] = maxKeys
		s["propertyNames"] = obj{"pattern": models.MapKeyPattern}
		maxLen := f.MaxLen
		if maxLen == 0 {
			maxLen = models.DefaultMaxLen
		}
		values := []obj{{"type": "string", "maxLength": maxLen}, {"type": "number"}, {"type": "boolean"}}
		if f.MapLists {
			values = append(values, obj{"type": "array", "maxItems": maxKeys, "items": obj{"type": "string", "maxLength": maxLen}})
		}
		s["additionalProperties"] = obj{"oneOf": values}
	case models.Destination:
		types := f.DestTypes
		if len(types) == 0 {
			types = models.DestinationTypes()
		}
		s["type"] = typ("object")
		s["properties"] = obj{
			"type":   obj{"type": "string", "enum": types},
			"target": obj{"type": []string{"string", "null"}, "description": "extension, number or id; empty for hangup"},
		}
		s["required"] = []string{"type"}
		s["additionalProperties"] = false
	}
	if f.Doc != "" {
		s["description"] = f.Doc
	}
	switch {
	case f.Default == nil:
	case dir == request:
		// No "default" in what a client sends: generators (openapi-typescript)
		// make such properties required, and on an update it would say that
		// leaving the field out resets it. The server applies it on create.
		note := "Left out on create: " + defaultText(f.Default) + "."
		if d, _ := s["description"].(string); d != "" {
			note = d + " " + note
		}
		s["description"] = note
	default:
		s["default"] = f.Default
	}
	if f.ReadOnly {
		s["readOnly"] = true
	}
	return s
}

// stringBounds adds a string's length, pattern and enum (with null among
// the values when the field is nullable: an enum is checked on null too).
func stringBounds(f *models.Field, s obj, nullable bool, dir direction) {
	max := f.MaxLen
	if max == 0 {
		max = models.DefaultMaxLen
	}
	s["maxLength"] = max
	pattern := f.Pattern
	if dir == request {
		pattern = f.InputPattern()
	} else if f.ReadPattern != "" {
		pattern = f.ReadPattern
	}
	if pattern != "" {
		s["pattern"] = pattern
	}
	if len(f.Enum) > 0 {
		enum := []any{}
		for _, v := range f.Enum {
			enum = append(enum, v)
		}
		if nullable {
			enum = append(enum, nil)
		}
		s["enum"] = enum
	}
}

// objectPropsSchema is the schema of an object with declared members.
// Members may be sent as null (they are then left out); members without a
// default that are not required may be absent from answers.
func objectPropsSchema(props []*models.Field, dir direction) obj {
	ps := obj{}
	var req []string
	for _, p := range props {
		ps[p.Name] = valueSchema(p, !p.Required, dir)
		if p.Required && p.Default == nil {
			req = append(req, p.Name)
		}
	}
	o := obj{"type": "object", "properties": ps, "additionalProperties": false}
	if len(req) > 0 {
		o["required"] = req
	}
	return o
}

// defaultText shows a declared default as JSON would.
func defaultText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

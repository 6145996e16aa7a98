package models

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard/switchboard/internal/freeswitch/command"
)

// Record is one object as the API sees it: JSON-shaped values (string,
// int64, float64, bool, []any, map[string]any, nil).
type Record map[string]any

// Mode says whether input creates or updates an object.
type Mode int

// Modes of Validate.
const (
	Create Mode = iota
	Update
)

const defaultMaxLen = 255

// Validate checks raw JSON input (decoded with UseNumber) against the
// resource's fields and returns the normalised record. On Create it applies
// defaults and generates secrets; on Update only the given fields are kept.
// Unknown, read-only and (on update) immutable fields are refused. Phone
// numbers are taken in international form only (ValidateIn also reads
// national ones).
func Validate(res *Resource, input map[string]any, mode Mode) (Record, error) {
	return ValidateIn(res, input, mode, "")
}

// ValidateIn is Validate with a default region (ISO 3166 alpha-2, "" for
// none): E.164 fields also take a national number of that region
// ("011 555 0000" in ZA) and store its E.164 form (+27115550000).
func ValidateIn(res *Resource, input map[string]any, mode Mode, region string) (Record, error) {
	verr := &ValidationError{}
	out := Record{}
	for name, raw := range input {
		f := res.Field(name)
		switch {
		case f == nil:
			verr.add(name, "unknown field")
			continue
		case f.ReadOnly:
			verr.add(name, "read-only field")
			continue
		case mode == Update && (f.Immutable || f.Input):
			verr.add(name, "cannot be changed")
			continue
		}
		if raw == nil {
			if f.Required {
				verr.add(name, "required")
			} else {
				out[name] = nil
			}
			continue
		}
		v, msg := normalise(f, raw, region)
		if msg != "" {
			verr.add(name, "%s", msg)
			continue
		}
		out[name] = v
	}
	if mode == Create {
		for _, f := range res.Fields {
			if _, ok := out[f.Name]; ok || verr.Fields[f.Name] != "" {
				continue
			}
			switch {
			case f.Generate != nil:
				out[f.Name] = f.Generate()
			case f.Default != nil:
				out[f.Name] = cloneDefault(f.Default)
			case f.Required:
				verr.add(f.Name, "required")
			}
		}
	}
	return out, verr.orNil()
}

func cloneDefault(v any) any {
	if l, ok := v.([]any); ok {
		return append([]any(nil), l...)
	}
	if n, ok := v.(int); ok {
		return int64(n)
	}
	return v
}

// normalise checks one value against its field and returns it in canonical
// form, or a message saying what is wrong.
func normalise(f *Field, raw any, region string) (any, string) {
	switch f.Type {
	case String, Time:
		s, ok := raw.(string)
		if !ok {
			return nil, "must be a string"
		}
		return checkString(f, s, region)
	case Int:
		n, ok := asInt(raw)
		if !ok {
			return nil, "must be an integer"
		}
		if f.HasRange && (n < f.Min || n > f.Max) {
			return nil, fmt.Sprintf("must be between %d and %d", f.Min, f.Max)
		}
		if f.Ref != "" && n <= 0 {
			return nil, "must be a positive id"
		}
		return n, ""
	case Number:
		num, ok := raw.(json.Number)
		if !ok {
			return nil, "must be a number"
		}
		x, err := num.Float64()
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, "must be a number"
		}
		return x, ""
	case Bool:
		b, ok := raw.(bool)
		if !ok {
			return nil, "must be a boolean"
		}
		return b, ""
	case StringList, IntList:
		return normaliseList(f, raw, region)
	case Object:
		return normaliseObject(f.Props, raw, region)
	case ObjectList:
		list, msg := asList(f, raw)
		if msg != "" {
			return nil, msg
		}
		out := make([]any, len(list))
		for i, item := range list {
			v, msg := normaliseObject(f.Props, item, region)
			if msg != "" {
				return nil, fmt.Sprintf("item %d: %s", i, msg)
			}
			out[i] = v
		}
		return out, ""
	case Destination:
		return normaliseDestination(f, raw)
	case Map:
		return normaliseMap(f, raw)
	}
	return nil, "unsupported type"
}

func asInt(raw any) (int64, bool) {
	num, ok := raw.(json.Number)
	if !ok {
		return 0, false
	}
	n, err := num.Int64()
	return n, err == nil
}

func checkString(f *Field, s string, region string) (any, string) {
	if !utf8.ValidString(s) {
		return nil, "must be valid UTF-8"
	}
	max := f.MaxLen
	if max == 0 {
		max = defaultMaxLen
	}
	if utf8.RuneCountInString(s) > max {
		return nil, fmt.Sprintf("at most %d characters", max)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return nil, "must not contain control characters"
		}
	}
	if f.NoExpand && strings.Contains(s, "${") {
		return nil, "must not contain ${ (FreeSWITCH variable syntax)"
	}
	if len(f.Enum) > 0 && !contains(f.Enum, s) {
		return nil, "must be one of " + strings.Join(f.Enum, ", ")
	}
	if f.Pattern == patE164 {
		e164, msg := normalisePhoneField(s, region)
		if msg != "" {
			return nil, msg
		}
		s = e164
	} else if f.re != nil && !f.re.MatchString(s) {
		return nil, patternMessage(f.Pattern)
	}
	if f.Required && strings.TrimSpace(s) == "" {
		return nil, "required"
	}
	if f.Command && !commandUsable(f, s) {
		return nil, `not usable in a FreeSWITCH command: must not contain ' " ; < > { } [ ] | \ $ ^ ` + "`"
	}
	return s, ""
}

// commandUsable reports whether a Command field's value can be carried by
// a FreeSWITCH command's variable block (command.QuoteListVar, the rule the
// callback originate applies).
func commandUsable(f *Field, s string) bool {
	if f.Pattern == patDisplayCID {
		if lt := strings.LastIndexByte(s, '<'); lt >= 0 {
			s = strings.Trim(strings.TrimSpace(s[:lt]), `"`)
		}
	}
	_, err := command.QuoteListVar(s)
	return err == nil
}

// asList checks that raw is an array within the field's item bounds.
func asList(f *Field, raw any) ([]any, string) {
	list, ok := raw.([]any)
	switch {
	case !ok:
		return nil, "must be an array"
	case f.MaxItems > 0 && len(list) > f.MaxItems:
		return nil, fmt.Sprintf("at most %d items", f.MaxItems)
	case f.Required && len(list) == 0:
		return nil, "at least one item is required"
	}
	return list, ""
}

func normaliseList(f *Field, raw any, region string) (any, string) {
	list, msg := asList(f, raw)
	if msg != "" {
		return nil, msg
	}
	item := &Field{Type: String, MaxLen: f.MaxLen, Pattern: f.Pattern, Enum: f.Enum, re: f.re, NoExpand: true}
	if f.Type == IntList {
		item = &Field{Type: Int}
	}
	out := make([]any, len(list))
	for i, raw := range list {
		v, msg := normalise(item, raw, region)
		if msg != "" {
			return nil, fmt.Sprintf("item %d: %s", i, msg)
		}
		out[i] = v
	}
	return out, ""
}

func normaliseObject(props []*Field, raw any, region string) (any, string) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, "must be an object"
	}
	out := map[string]any{}
	for k, v := range obj {
		p := findField(props, k)
		if p == nil {
			return nil, fmt.Sprintf("%s: unknown field", k)
		}
		if v == nil {
			continue
		}
		nv, msg := normalise(p, v, region)
		if msg != "" {
			return nil, fmt.Sprintf("%s: %s", k, msg)
		}
		out[k] = nv
	}
	for _, p := range props {
		if _, ok := out[p.Name]; ok {
			continue
		}
		if p.Default != nil {
			out[p.Name] = cloneDefault(p.Default)
		} else if p.Required {
			return nil, fmt.Sprintf("%s: required", p.Name)
		}
	}
	return out, ""
}

func findField(fields []*Field, name string) *Field {
	for _, f := range fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// destinationTargets says what a destination's target must look like.
var destinationTargets = map[string]*regexp.Regexp{
	"extension":          regexp.MustCompile(patNumber),
	"voicemail":          regexp.MustCompile(patNumber),
	"special_mailbox":    regexp.MustCompile(patNumber),
	"queue":              regexp.MustCompile(patNumber),
	"hunt_group":         regexp.MustCompile(patNumber),
	"ivr":                regexp.MustCompile(patNumber),
	"conference":         regexp.MustCompile(patNumber),
	"routing_condition":  regexp.MustCompile(patNumber),
	"special_endpoint":   regexp.MustCompile(patNumber),
	"directory":          regexp.MustCompile(patNumber),
	"external":           regexp.MustCompile(patDialable),
	"prompt_then_hangup": regexp.MustCompile(`^[0-9]{1,18}$`),
	"hangup":             regexp.MustCompile(`^([A-Z_]{3,40})?$`),
}

func normaliseDestination(f *Field, raw any) (any, string) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, `must be an object {"type","target"}`
	}
	for k := range obj {
		if k != "type" && k != "target" {
			return nil, k + ": unknown field"
		}
	}
	typ, _ := obj["type"].(string)
	rule := destinationTargets[typ]
	if rule == nil || (len(f.DestTypes) > 0 && !contains(f.DestTypes, typ)) {
		allowed := f.DestTypes
		if len(allowed) == 0 {
			allowed = destinationTypes
		}
		return nil, "type must be one of " + strings.Join(allowed, ", ")
	}
	target, _ := obj["target"].(string)
	if _, isStr := obj["target"].(string); obj["target"] != nil && !isStr {
		return nil, "target must be a string"
	}
	if typ != "hangup" && target == "" {
		return nil, "target is required"
	}
	if !rule.MatchString(target) {
		return nil, "target for type " + typ + " " + patternMessage(rule.String())
	}
	return map[string]any{"type": typ, "target": target}, ""
}

// mapKeyRE bounds the keys of Map fields: they become JSON keys, HTTP
// header names or custom-field keys, never free text.
var mapKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// defaultMapKeys bounds Map fields that declare no MaxItems.
const defaultMapKeys = 50

// normaliseMap checks a free-form object: bounded keys, flat values.
func normaliseMap(f *Field, raw any) (any, string) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, "must be an object"
	}
	max := f.MaxItems
	if max == 0 {
		max = defaultMapKeys
	}
	if len(obj) > max {
		return nil, fmt.Sprintf("at most %d keys", max)
	}
	str := &Field{Type: String, MaxLen: f.MaxLen, NoExpand: f.NoExpand}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if !mapKeyRE.MatchString(k) {
			return nil, fmt.Sprintf("key %q %s", k, patternMessage(mapKeyRE.String()))
		}
		switch x := v.(type) {
		case string:
			nv, msg := checkString(str, x, "")
			if msg != "" {
				return nil, k + ": " + msg
			}
			out[k] = nv
		case bool:
			out[k] = x
		case json.Number:
			if n, err := x.Int64(); err == nil {
				out[k] = n
				continue
			}
			n, msg := normalise(&Field{Type: Number}, x, "")
			if msg != "" {
				return nil, k + ": " + msg
			}
			out[k] = n
		case []any:
			if !f.MapLists {
				return nil, k + ": must be a string, number or boolean"
			}
			items := make([]any, 0, len(x))
			for i, it := range x {
				s, ok := it.(string)
				if !ok {
					return nil, fmt.Sprintf("%s[%d]: must be a string", k, i)
				}
				nv, msg := checkString(str, s, "")
				if msg != "" {
					return nil, fmt.Sprintf("%s[%d]: %s", k, i, msg)
				}
				items = append(items, nv)
			}
			if len(items) > max {
				return nil, fmt.Sprintf("%s: at most %d items", k, max)
			}
			out[k] = items
		default:
			if f.MapLists {
				return nil, k + ": must be a string, number, boolean or array of strings"
			}
			return nil, k + ": must be a string, number or boolean"
		}
	}
	return out, ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// DestinationTypes lists the destination types (for documentation).
func DestinationTypes() []string { return append([]string(nil), destinationTypes...) }

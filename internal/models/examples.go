package models

import "strings"

// Examples for the reference: every create body the OpenAPI document
// shows is one the server accepts. Values follow from the declarations —
// a field's declared Example, else its pattern's example (patternExamples),
// the first choice of an enum, a range's minimum or the key of the object
// a reference names — so a new resource gets a working example without
// example code; a field whose rules no generic value meets declares one.

// patternExamples are values that meet the shared patterns.
var patternExamples = map[string]any{
	patTenant:      "acme",
	patNumber:      "1001",
	patE164:        "+14155550123",
	patDialable:    "1001",
	patDigitsCID:   "+14155550123",
	patDisplayCID:  "Reception <1001>",
	patLanguage:    "en",
	patCountry:     "US",
	patPIN:         "4821",
	patHostname:    "pbx1.example.com",
	patEmail:       "ops@example.com",
	patRFC3339:     "2030-01-01T09:00:00Z",
	patSlug:        "main",
	patURL:         "https://hooks.example.com/switchboard",
	patOrigin:      "https://crm.example.com",
	patMAC:         "00:15:65:12:34:56",
	patChatChannel: "support",
	// Patterns written where their field is declared.
	`^[a-z0-9_]{1,32}$`:               "main",
	`^[a-z0-9-]{2,16}$`:               "hq",
	`^[0-9]{2,8}$`:                    "2001",
	`^\*{1,2}[0-9]{0,6}$`:             "*77",
	`^[a-z][a-z0-9_]{0,31}$`:          "tier",
	`^[a-z0-9._@-]{3,64}$`:            "jane.doe",
	`^.{12,}$`:                        "a long passphrase, not this one",
	`^_?[0-9XZNxzn.!\[\]*#+-]{1,40}$`: "_1NXXNXXXXXX",
}

// Derived, as a field's Example, puts the field in the create example
// with the value that follows from its declaration: a field that rules
// across fields require (an IVR menu's greeting) but that is not required
// on its own.
var Derived = derivedExample{}

type derivedExample struct{}

// ExampleDep is an object an example refers to, which must exist before
// the example is sent: the target resource's own example. ByID marks a
// top-level field that names it by id (the example carries 1; a client
// puts the real id there).
type ExampleDep struct {
	Field, Resource string
	ByID            bool
}

// CreateExample is a create body of the resource that the server accepts
// once the objects in deps exist: its required fields (those without a
// default or a generated value) and the fields that declare an example.
func (r *Resource) CreateExample() (map[string]any, []ExampleDep) {
	out := map[string]any{}
	var deps []ExampleDep
	for _, f := range r.Fields {
		if f.ReadOnly || (f.Example == nil && !(f.Required && f.Generate == nil && f.Default == nil)) {
			continue
		}
		v, d := exampleOf(r, f)
		out[f.Name] = v
		for i := range d {
			if d[i].Field == "" {
				d[i].Field = f.Name
			}
		}
		deps = append(deps, d...)
	}
	return out, deps
}

// withExample declares f's Example (for fields built by helpers).
func withExample(f *Field, v any) *Field {
	f.Example = v
	return f
}

// resourceByName finds a declared resource.
func resourceByName(name string) *Resource {
	for _, r := range Resources {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// keyExample is the value a reference to target by col carries: the key
// of target's own example.
func keyExample(target *Resource, col string) any {
	if col == "id" {
		return 1
	}
	if f := target.Field(col); f != nil {
		v, _ := exampleOf(target, f)
		return v
	}
	return nil
}

func exampleOf(res *Resource, f *Field) (any, []ExampleDep) {
	if f.Example != nil && f.Example != Derived {
		return f.Example, nil
	}
	if f.ExampleOf[0] != "" {
		if target := resourceByName(f.ExampleOf[0]); target != nil {
			return keyExample(target, f.ExampleOf[1]), []ExampleDep{{Resource: target.Name}}
		}
	}
	if f.Ref != "" && f.RefWhen[0] == "" {
		if target := resourceByName(f.Ref); target != nil {
			col := f.refCol(target)
			dep := []ExampleDep{{Resource: target.Name, ByID: col == "id"}}
			v := keyExample(target, col)
			if f.Type == StringList || f.Type == IntList {
				return []any{v}, dep
			}
			return v, dep
		}
	}
	switch f.Type {
	case Bool:
		if f.Default != nil {
			return f.Default, nil
		}
		return false, nil
	case Int, Number:
		switch {
		case f.Default != nil:
			return f.Default, nil
		case f.HasRange:
			return f.Min, nil
		}
		return 1, nil
	case IntList:
		return []any{1}, nil
	case StringList:
		return []any{scalarExample(res, f)}, nil
	case Object:
		return propsExample(res, f.Props)
	case ObjectList:
		v, deps := propsExample(res, f.Props)
		return []any{v}, deps
	case Destination:
		return destinationExample(f)
	case Map:
		return map[string]any{}, nil
	}
	return scalarExample(res, f), nil
}

// propsExample is an object of an Object field's required members.
func propsExample(res *Resource, props []*Field) (map[string]any, []ExampleDep) {
	out := map[string]any{}
	var deps []ExampleDep
	for _, p := range props {
		if p.Example == nil && !(p.Required && p.Default == nil) {
			continue
		}
		v, d := exampleOf(res, p)
		out[p.Name] = v
		deps = append(deps, d...)
	}
	// A member that refers only when a sibling names its type (hunt-group
	// members of type extension) refers to that type's example.
	for _, p := range props {
		if p.Ref == "" || p.RefWhen[0] == "" || out[p.RefWhen[0]] != p.RefWhen[1] {
			continue
		}
		if target := resourceByName(p.Ref); target != nil {
			out[p.Name] = keyExample(target, p.refCol(target))
			deps = append(deps, ExampleDep{Resource: target.Name})
		}
	}
	return out, deps
}

// destinationExample hangs up where a field allows it; else it sends the
// call to the first allowed type's example object.
func destinationExample(f *Field) (any, []ExampleDep) {
	types := f.DestTypes
	if len(types) == 0 {
		types = destinationTypes
	}
	for _, t := range types {
		if t == "hangup" {
			return map[string]any{"type": "hangup"}, nil
		}
	}
	ref, ok := destinationRefs[types[0]]
	if !ok {
		return map[string]any{"type": types[0]}, nil
	}
	target := resourceByName(ref[0])
	return map[string]any{"type": types[0], "target": keyExample(target, ref[1])},
		[]ExampleDep{{Resource: target.Name}}
}

// scalarExample is a string value: the pattern's example, the first enum
// choice, or words naming the field ("Example queue name").
func scalarExample(res *Resource, f *Field) any {
	if v, ok := patternExamples[f.Pattern]; ok {
		return v
	}
	if len(f.Enum) > 0 {
		return f.Enum[0]
	}
	if f.Default != nil {
		return f.Default
	}
	return "Example " + res.Title + " " + strings.ReplaceAll(f.Name, "_", " ")
}

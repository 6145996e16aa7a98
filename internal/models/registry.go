// Package models holds Switchboard's domain: the resource registry that
// declares every configuration resource once, validation, and the stores
// (sqlx over MySQL or SQLite).
package models

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Scope says where a resource lives.
type Scope int

const (
	// Platform resources live at /api/<path>/.
	Platform Scope = iota
	// TenantScope resources live at /api/tenants/<tenant>/<path>/.
	TenantScope
)

// FieldType is the JSON type of a field; it also decides the column type.
type FieldType int

// Field types.
const (
	String FieldType = iota
	Int
	Bool
	Number
	Time        // RFC 3339 UTC text
	StringList  // JSON array of strings
	IntList     // JSON array of integers
	Object      // JSON object with Props
	ObjectList  // JSON array of objects with Props
	Destination // {"type","target"}: where a call goes
	// Map is a JSON object with free-form keys (custom fields, provider
	// credentials, HTTP headers) and string, number or boolean values;
	// MaxItems bounds the number of keys, MaxLen each string value.
	Map
)

// SecretKind says how a write-only secret is kept.
type SecretKind int

const (
	// NotSecret fields are returned by GET.
	NotSecret SecretKind = iota
	// Encrypted secrets are needed in clear by FreeSWITCH or a third party
	// (SIP secrets, trunk passwords), so they are sealed with the server key.
	Encrypted
	// Hashed secrets are only ever verified by us (passwords, API keys).
	Hashed
	// Digest secrets are generated high-entropy tokens (webhook URLs) kept
	// as SHA-256, so a request can be matched by the digest of its token;
	// shown once, in the create answer.
	Digest
)

// Field declares one field of a resource.
type Field struct {
	Name     string
	Type     FieldType
	Doc      string
	Required bool
	Default  any
	// MaxLen bounds strings (in characters); 0 means the type's default.
	MaxLen int
	// Min and Max bound integers when HasRange is set.
	Min, Max int64
	HasRange bool
	Pattern  string
	Enum     []string
	// Ref names the resource an integer id (or name) refers to, in the same tenant
	// for tenant resources. On lists each item refers; on the props of
	// objects and object lists each item's prop does (refs.go).
	Ref string
	// RefBy names a sibling prop whose value picks the target from
	// RefTargets (a polymorphic reference: related {type, id} names a
	// contact, account, lead or deal by type).
	RefBy      string
	RefTargets map[string]string
	// RefKey is the target column Ref names (default id for integers, the
	// target's path key for strings).
	RefKey string
	// RefWhen limits a prop's reference to items whose sibling prop
	// RefWhen[0] equals RefWhen[1] (hunt-group members of type extension).
	RefWhen [2]string
	Secret  SecretKind
	// Generate makes a missing secret be generated and returned once.
	Generate func() string
	// Masked secrets (provider credentials) are never echoed, not even by
	// the create answer: reads show each value reduced to its last four
	// characters, enough to tell which credential is configured.
	Masked bool
	// ReadPattern, when set, is the pattern of what reads show instead of
	// Pattern (an uploaded data: URL read back as the URL serving it).
	ReadPattern string
	ReadOnly    bool
	// Immutable fields are set on create and refused on update.
	Immutable bool
	// Input fields are accepted on create only and never stored (tenant_to_clone).
	Input bool
	// NoExpand refuses FreeSWITCH variable syntax ("${", "$${"), for values
	// that reach dialplan data or channel variables.
	NoExpand bool
	// Command fields reach a variable of a FreeSWITCH API command (the
	// caller ids of a callback originate): a value command.QuoteListVar cannot
	// carry (quotes, ; < > { } [ ] | \ $ ^ `) is refused when written, so
	// no later call fails on it. For a display caller id ("Name <1001>")
	// its name part is checked.
	Command bool
	// NumberPlan puts the value into the tenant's shared number plan.
	NumberPlan bool
	// Props are the members of Object and ObjectList fields.
	Props []*Field
	// MaxItems bounds list fields and the keys of Map fields.
	MaxItems int
	// MapLists lets a Map's values also be arrays of strings (multi-select
	// custom field values).
	MapLists bool
	// DestTypes limits Destination fields to these types (nil: all).
	DestTypes []string
	// Example is a value the reference shows for the field, where the
	// one that follows from the declaration (examples.go) would not do;
	// the create examples include every field that declares one.
	Example any
	// ExampleOf names the resource and column a field names an object of
	// without being a reference (a hook checks it): its example is that
	// resource's example's value, which the reference creates first.
	ExampleOf [2]string

	re *regexp.Regexp
}

// Stored reports whether the field has a column.
func (f *Field) Stored() bool { return !f.Input }

// Resource declares one configuration resource: routes, validation, the
// OpenAPI schema and the schema checks all come from it.
type Resource struct {
	// Name is the registry name and path segment (extensions, sip_trunks).
	Name   string
	Title  string // human singular, for docs
	Scope  Scope
	Table  string
	Fields []*Field
	// Key is the field addressing one object in paths; "" means id.
	Key string
	// WritePermission is what creating, changing or deleting needs
	// instead of config.write.
	WritePermission string
	// OwnPermission, when set, is the narrower grant that covers only the
	// objects the caller created, in chat channels it belongs to
	// (incoming_webhooks.manage_own); routes check both.
	OwnPermission string
	// Singleton resources have one object per tenant (GET/PUT on the path).
	Singleton bool
	// Hooks adds behaviour beyond CRUD (see hooks.go).
	Hooks any
	// Order is the stable list order (a column); default the key.
	Order string
	// CloneFlag names the tenant_* clone flag that copies this resource.
	CloneFlag string
	// Unique lists the unique keys (columns; tenant resources get tenant_id
	// prepended). The database enforces them: duplicates answer 409.
	Unique [][]string
	// CreateAnswer declares fields a hook adds to the create answer only
	// (the tenant clone report), so the answer and its OpenAPI schema agree.
	CreateAnswer []*Field
	// Listing declares the list's search, filters and sort (listing.go);
	// nil lists in the stable order with paging only.
	Listing *Listing

	byName  map[string]*Field
	indexed []*Field // the Fields byName was built from
}

// Field returns the named field or nil.
func (r *Resource) Field(name string) *Field { return r.byName[name] }

// KeyField is the column that addresses objects in paths.
func (r *Resource) KeyField() string {
	if r.Key == "" {
		return "id"
	}
	return r.Key
}

// HasID reports whether rows carry a generated integer id exposed as "id".
func (r *Resource) HasID() bool { return r.Key == "" && !r.Singleton }

// Registry is the checked set of resources.
type Registry struct {
	list   []*Resource
	byName map[string]*Resource
	// refCols lists, per resource, the columns other objects refer to it by.
	refCols map[string][]string
	// rendered, when set, limits the destination types a write may use
	// to those the renderer renders (SetRenderedDestinations).
	rendered map[string]bool
}

var identRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// prepareMu serializes the first check of shared resource declarations.
var prepareMu sync.Mutex

// sameSlice reports whether a and b are the same slice (a copied
// declaration with its own fields is indexed anew).
func sameSlice(a, b []*Field) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// NewRegistry checks the declarations the way a compiler would: unique
// names, safe identifiers, compilable patterns, references that resolve.
// A bad declaration is a programming error, caught at start and in tests.
//
// Checking fills each resource's field index and compiled patterns once:
// resources are package-level declarations that every registry of the
// process (tests build many at once) shares and reads without locks.
func NewRegistry(resources []*Resource) (*Registry, error) {
	prepareMu.Lock()
	defer prepareMu.Unlock()
	reg := &Registry{byName: map[string]*Resource{}}
	tables := map[string]bool{}
	for _, r := range resources {
		if !identRE.MatchString(r.Name) || !identRE.MatchString(r.Table) {
			return nil, fmt.Errorf("resource %q: name and table must be identifiers", r.Name)
		}
		if reg.byName[r.Name] != nil || tables[r.Table] {
			return nil, fmt.Errorf("resource %q: duplicate name or table", r.Name)
		}
		tables[r.Table] = true
		if r.byName == nil || !sameSlice(r.indexed, r.Fields) {
			byName := map[string]*Field{}
			if err := checkFields(r.Name, r.Fields, byName); err != nil {
				return nil, err
			}
			r.byName, r.indexed = byName, r.Fields
		}
		if r.Key != "" && r.byName[r.Key] == nil {
			return nil, fmt.Errorf("resource %q: key %q is not a field", r.Name, r.Key)
		}
		if err := checkListing(r); err != nil {
			return nil, err
		}
		reg.byName[r.Name] = r
		reg.list = append(reg.list, r)
	}
	reg.refCols = map[string][]string{}
	addCol := func(target, col string) {
		if !contains(reg.refCols[target], col) {
			reg.refCols[target] = append(reg.refCols[target], col)
		}
	}
	for _, t := range destinationRefs {
		if reg.byName[t[0]] != nil {
			addCol(t[0], t[1])
		}
	}
	var check func(r *Resource, fields []*Field) error
	check = func(r *Resource, fields []*Field) error {
		for _, f := range fields {
			if err := check(r, f.Props); err != nil {
				return err
			}
			for _, t := range f.RefTargets {
				if f.RefBy == "" || reg.byName[t] == nil || f.Type != Int {
					return fmt.Errorf("resource %q field %q: RefTargets need RefBy, an integer id and known resources (%q)", r.Name, f.Name, t)
				}
				addCol(t, "id")
			}
			if f.Ref == "" {
				continue
			}
			target := reg.byName[f.Ref]
			if target == nil {
				return fmt.Errorf("resource %q field %q: unknown reference %q", r.Name, f.Name, f.Ref)
			}
			col := f.refCol(target)
			if col != "id" && target.Field(col) == nil {
				return fmt.Errorf("resource %q field %q: reference key %q is not a field of %q", r.Name, f.Name, col, f.Ref)
			}
			addCol(f.Ref, col)
		}
		return nil
	}
	for _, r := range reg.list {
		if err := check(r, r.Fields); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// SetRenderedDestinations limits the destination types writes may use to
// the ones the renderer turns into working dialplan (the renderer declares
// them: dialplan.RenderedDestinationTypes), so a destination that would be
// accepted and then dropped is refused instead. Call it before serving.
func (reg *Registry) SetRenderedDestinations(types []string) {
	reg.rendered = map[string]bool{}
	for _, t := range types {
		reg.rendered[t] = true
	}
}

// checkRendered refuses destinations of types the renderer does not render.
func (reg *Registry) checkRendered(res *Resource, rec Record) error {
	if reg.rendered == nil {
		return nil
	}
	verr := &ValidationError{}
	var walk func(top, path string, fields []*Field, m map[string]any)
	walk = func(top, path string, fields []*Field, m map[string]any) {
		for _, f := range fields {
			v, ok := m[f.Name]
			if !ok || v == nil {
				continue
			}
			name, p := top, path+f.Name
			if top == "" {
				name = f.Name
			}
			switch {
			case f.Type == Destination:
				d, _ := v.(map[string]any)
				if typ, _ := d["type"].(string); typ != "" && !reg.rendered[typ] && verr.Fields[name] == "" {
					verr.add(name, "%s: destination type %s is not rendered into the dialplan yet; use one of %s", p, typ, strings.Join(sortedKeys(reg.rendered), ", "))
				}
			case f.Type == Object:
				sub, _ := v.(map[string]any)
				walk(name, p+".", f.Props, sub)
			case f.Type == ObjectList:
				items, _ := v.([]any)
				for i, it := range items {
					sub, _ := it.(map[string]any)
					walk(name, fmt.Sprintf("%s[%d].", p, i), f.Props, sub)
				}
			}
		}
	}
	walk("", "", res.Fields, rec)
	return verr.orNil()
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func checkFields(res string, fields []*Field, into map[string]*Field) error {
	for _, f := range fields {
		if !identRE.MatchString(f.Name) {
			return fmt.Errorf("resource %q: field name %q is not an identifier", res, f.Name)
		}
		if into[f.Name] != nil {
			return fmt.Errorf("resource %q: duplicate field %q", res, f.Name)
		}
		if f.Pattern != "" {
			re, err := regexp.Compile(f.Pattern)
			if err != nil {
				return fmt.Errorf("resource %q field %q: pattern: %w", res, f.Name, err)
			}
			f.re = re
		}
		if (f.Type == Object || f.Type == ObjectList) && len(f.Props) == 0 {
			return fmt.Errorf("resource %q field %q: object without props", res, f.Name)
		}
		if len(f.Props) > 0 {
			if err := checkFields(res+"."+f.Name, f.Props, map[string]*Field{}); err != nil {
				return err
			}
		}
		into[f.Name] = f
	}
	return nil
}

// Resources returns every resource in declaration order.
func (reg *Registry) Resources() []*Resource { return reg.list }

// Resource returns the named resource or nil.
func (reg *Registry) Resource(name string) *Resource { return reg.byName[name] }

// Names returns the sorted resource names.
func (reg *Registry) Names() []string {
	names := make([]string, 0, len(reg.list))
	for _, r := range reg.list {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	return names
}

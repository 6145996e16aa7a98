package routes

import (
	"encoding/json"

	"github.com/switchboard/switchboard/internal/models"
)

// A form's widgets come from the fields' declarations: type, enum,
// reference, secret kind and documentation. The rules a value must meet
// are not copied here: the form asks the API (dry runs as a field is
// left, the write on submit) and shows its answer beside the field.

// formField is one top-level field of a form.
type formField struct {
	fieldSpec
	// ID is the input's element id; Value the current value as the
	// input holds it (scalars), JSON the current value of structured
	// fields (built by the script from Spec).
	ID, Value string
	Checked   bool
	JSON      string
	Spec      string
	// Disabled fields cannot be changed (immutable ones on edit).
	Disabled    bool
	Placeholder string
	// Group puts the field in a fieldset with its neighbours of the same
	// group (the tenant clone's inputs).
	Group string
}

// fieldSpec is what the script needs to build and read a widget; nested
// fields (object props) carry their own.
type fieldSpec struct {
	Name     string      `json:"name"`
	Label    string      `json:"label"`
	Kind     string      `json:"kind"`
	Doc      string      `json:"doc,omitempty"`
	Required bool        `json:"required,omitempty"`
	Enum     []string    `json:"enum,omitempty"`
	Picker   *picker     `json:"picker,omitempty"`
	Props    []fieldSpec `json:"props,omitempty"`
	// Item is the kind of a list's items (text or number).
	Item string `json:"item,omitempty"`
	// Targets are a destination's pickers by type: the objects a target
	// of that type names (models.DestinationRef), where they are listed.
	Targets map[string]*picker `json:"targets,omitempty"`
}

// picker offers the objects a reference may name, read from the API's
// list: each option's value is the referenced column, its label the
// object's name.
type picker struct {
	List  string `json:"list"`
	Value string `json:"value"`
	Label string `json:"label"`
	// Search: the list takes ?q=, and List reads only its first
	// pickerPage objects; the page asks for more as a person types.
	Search bool `json:"search,omitempty"`
}

// pickerPage is how many objects a searchable picker reads up front: a
// tenant with thousands of extensions does not send them all with every
// form (issue 26: 877 KB for a form picking from 1,000).
const pickerPage = 50

// Widget kinds.
const (
	kindText        = "text"
	kindSecret      = "secret"
	kindNumber      = "number"
	kindBool        = "bool"
	kindEnum        = "enum"
	kindFlag        = "flag"   // an input-only "1" flag (tenant clone parts): a checkbox
	kindList        = "list"   // string or integer list: one row per item
	kindChecks      = "checks" // string list of an enum: checkboxes
	kindRows        = "rows"   // object list: a table, a row per object
	kindObject      = "object" // object: its props in a fieldset
	kindDestination = "destination"
	kindJSON        = "json" // free-form map: JSON text
)

// specOf derives a field's widget.
func specOf(f *models.Field, tenant string, scope models.Scope) fieldSpec {
	sp := fieldSpec{Name: f.Name, Label: label(f.Name), Doc: f.Doc, Required: f.Required, Enum: f.Enum}
	switch f.Type {
	case models.String, models.Time:
		switch {
		case f.Input && f.MaxLen == 1:
			sp.Kind = kindFlag
		case len(f.Enum) > 0:
			sp.Kind = kindEnum
		case f.Secret != models.NotSecret:
			sp.Kind = kindSecret
		default:
			sp.Kind = kindText
		}
	case models.Int, models.Number:
		sp.Kind = kindNumber
	case models.Bool:
		sp.Kind = kindBool
	case models.StringList, models.IntList:
		sp.Kind, sp.Item = kindList, kindText
		if f.Type == models.IntList {
			sp.Item = kindNumber
		}
		if len(f.Enum) > 0 {
			sp.Kind = kindChecks
		}
	case models.Object, models.ObjectList:
		sp.Kind = kindObject
		if f.Type == models.ObjectList {
			sp.Kind = kindRows
		}
		for _, p := range f.Props {
			sp.Props = append(sp.Props, specOf(p, tenant, scope))
		}
	case models.Destination:
		sp.Kind = kindDestination
		sp.Enum = f.DestTypes
		if len(sp.Enum) == 0 {
			sp.Enum = models.DestinationTypes()
		}
		for _, typ := range sp.Enum {
			res, col, ok := models.DestinationRef(typ)
			if !ok {
				continue
			}
			if p := pickerFor(resourceByName(res), col, tenant, scope); p != nil {
				if sp.Targets == nil {
					sp.Targets = map[string]*picker{}
				}
				sp.Targets[typ] = p
			}
		}
	default:
		sp.Kind = kindJSON
	}
	sp.Picker = pickerOf(f, tenant, scope)
	return sp
}

// pickerOf is the picker of a reference field, when its targets can be
// listed from where the form is: a platform resource's list, or the
// tenant's own objects on a tenant form.
func pickerOf(f *models.Field, tenant string, scope models.Scope) *picker {
	if f.Ref == "" || f.RefBy != "" {
		return nil
	}
	target := resourceByName(f.Ref)
	if target == nil {
		return nil
	}
	return pickerFor(target, f.RefColumn(target), tenant, scope)
}

// pickerFor offers target's objects by their column col, when they can
// be listed from where the form is.
func pickerFor(target *models.Resource, col, tenant string, scope models.Scope) *picker {
	if target == nil || target.Singleton || target.Custom() || (target.Scope == models.TenantScope && scope != models.TenantScope) {
		return nil
	}
	lbl := target.KeyField()
	if lf := labelField(target); lf != nil {
		lbl = lf.Name
	}
	if target.Listing != nil && len(target.Listing.Search) > 0 {
		return &picker{List: apiCollection(target, tenant) + "?limit=" + itoa(pickerPage), Value: col, Label: lbl, Search: true}
	}
	return &picker{List: apiCollection(target, tenant) + "?limit=" + itoa(int64(maxLimit)), Value: col, Label: lbl}
}

// formFields are a form's fields: on create every writable one, on edit
// the stored ones (immutable ones shown, not editable).
func formFields(res *models.Resource, tenant string, rec models.Record, edit bool) []formField {
	var out []formField
	for _, f := range res.Fields {
		if f.ReadOnly || (edit && f.Input) {
			continue
		}
		ff := formField{fieldSpec: specOf(f, tenant, res.Scope), ID: "f-" + f.Name, Disabled: edit && f.Immutable}
		if f.Input && res.Name == "tenants" {
			// The clone's inputs are one guided group; the tenant to copy
			// is picked from the tenants (the field names one, unchecked
			// as a reference because it is never stored).
			ff.Group = "clone"
			if f.Name == "tenant_to_clone" {
				ff.Picker = &picker{List: apiCollection(res, "") + "?limit=" + itoa(int64(maxLimit)), Value: "tenant", Label: "tenant"}
			}
		}
		var v any
		if edit {
			v = rec[f.Name]
			if f.Secret != models.NotSecret {
				v = nil // a secret is replaced, never shown
				ff.Placeholder = "unchanged unless you type a new one"
			}
		} else if f.Default != nil {
			v = f.Default
		}
		switch ff.Kind {
		case kindBool:
			ff.Checked, _ = v.(bool)
		case kindText, kindSecret, kindNumber, kindEnum:
			if v != nil {
				ff.Value = displayValue(f, v)
			}
		case kindFlag:
		default:
			if v != nil {
				b, _ := json.Marshal(v)
				ff.JSON = string(b)
			}
		}
		spec, _ := json.Marshal(ff.fieldSpec)
		ff.Spec = string(spec)
		out = append(out, ff)
	}
	return out
}

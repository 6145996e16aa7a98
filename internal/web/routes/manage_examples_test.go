package routes_test

import (
	"fmt"
	"net/url"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models"
)

// examples makes valid objects of any resource from its declaration, for
// the tests that walk the whole registry: each required field gets a value
// of its type that meets its pattern (generated from the pattern itself),
// and each required reference names an object created first.
type examples struct {
	t      *testing.T
	s      *apptest.Server
	tenant string
	n      int
	// made are objects created for references, by resource.
	made map[string]map[string]any
	// given are the values fromPattern returned: numbers of one tenant
	// share its number plan, and two resources given the same one (a
	// conference room's 89 beside extension 89, seen in CI) were refused.
	given map[string]bool
	// stride is how far the digits turn from one pick to the next (1 to
	// 8): a string made again after a collision takes the next stride, so
	// a two-digit number is not only ever two consecutive digits.
	stride int
}

func newExamples(t *testing.T, s *apptest.Server, tenant string) *examples {
	return &examples{t: t, s: s, tenant: tenant, made: map[string]map[string]any{}, given: map[string]bool{}}
}

// collection is the API list of a resource.
func (e *examples) collection(res *models.Resource) string {
	if res.Scope == models.TenantScope {
		p := "/api/tenants/" + url.PathEscape(e.tenant) + "/" + res.Name
		if res.Singleton {
			return p
		}
		return p + "/"
	}
	return "/api/" + res.Name + "/"
}

// body is a valid create body of res: its required fields, and the
// values that rules across fields (hooks) ask for.
func (e *examples) body(res *models.Resource) map[string]any {
	out := map[string]any{}
	for _, f := range res.Fields {
		if f.Required && !f.ReadOnly {
			out[f.Name] = e.value(res, f)
		}
	}
	if more := exampleExtras[res.Name]; more != nil { // set in init: the extras create objects with body
		for k, v := range more(e) {
			out[k] = v
		}
	}
	return out
}

// exampleExtras are what a valid object needs beyond its required
// fields: phone numbers a country's plan accepts, and fields other
// fields' values make required.
var exampleExtras map[string]func(e *examples) map[string]any

func init() { exampleExtras = extras }

var extras = map[string]func(e *examples) map[string]any{
	"dids": func(*examples) map[string]any { return map[string]any{"number": "+27115550101"} },
	"emergency_locations": func(*examples) map[string]any {
		return map[string]any{"emergency_callerid": "+27115550102", "country": "ZA"}
	},
	"routing_conditions": func(e *examples) map[string]any {
		return map[string]any{"kind": "schedule", "schedule_id": e.object(resourceByNameT("schedules"))["id"]}
	},
	"inbound_routes": func(*examples) map[string]any { return map[string]any{"enabled": false} },
	"ivr_menus": func(e *examples) map[string]any {
		return map[string]any{"greeting_long_prompt_id": e.object(resourceByNameT("voice_prompts"))["id"]}
	},
	"special_endpoints": func(*examples) map[string]any { return map[string]any{"external_number": "+27115550103"} },
	"click_to_call_widgets": func(e *examples) map[string]any {
		return map[string]any{"destination": map[string]any{"type": "extension", "target": e.object(resourceByNameT("extensions"))["name"]}}
	},
	"messaging_channels": func(*examples) map[string]any {
		return map[string]any{"credentials": map[string]any{"account_sid": "AC0123456789abcdef0123456789abcdef", "auth_token": "0123456789abcdef0123456789abcdef"}}
	},
	"incoming_webhooks": func(e *examples) map[string]any {
		return map[string]any{"channel": e.object(resourceByNameT("chat_channels"))["name"]}
	},
	"contacts":  func(*examples) map[string]any { return map[string]any{"first_name": "Ann"} },
	"campaigns": func(*examples) map[string]any { return map[string]any{"destination": map[string]any{"type": "hangup"}} },
}

// freeSlot makes room for an object of res where the tenant already has
// the one its example would be (a tenant starts with every feature code).
func (e *examples) freeSlot(res *models.Resource, body map[string]any) {
	if res.Name != "feature_extensions" {
		return
	}
	var list []map[string]any
	e.s.Do(e.t, "GET", e.collection(res)+"?limit=1000", e.s.Key, nil).Expect(e.t, 200).JSON(e.t, &list)
	for _, fe := range list {
		if fe["feature"] == body["feature"] {
			e.s.Do(e.t, "DELETE", e.collection(res)+fmt.Sprint(fe["id"]), e.s.Key, nil).Expect(e.t, 204)
		}
	}
}

// value is a valid value of f.
func (e *examples) value(res *models.Resource, f *models.Field) any {
	e.n++
	if f.Ref != "" && f.RefBy == "" {
		if target := resourceByNameT(f.Ref); target != nil && target != res {
			rec := e.object(target)
			col := f.RefColumn(target)
			v := rec[col]
			if f.Type == models.Int {
				return v
			}
			if f.Type == models.StringList || f.Type == models.IntList {
				return []any{v}
			}
			return fmt.Sprint(v)
		}
	}
	switch f.Type {
	case models.Bool:
		return false
	case models.Int:
		if f.HasRange {
			return f.Min
		}
		return 1
	case models.Number:
		return 1
	case models.StringList, models.IntList:
		item := *f
		item.Type = models.String
		if f.Type == models.IntList {
			item.Type = models.Int
		}
		return []any{e.value(res, &item)}
	case models.Object:
		return e.props(res, f.Props)
	case models.ObjectList:
		return []any{e.props(res, f.Props)}
	case models.Destination:
		types := f.DestTypes
		if len(types) == 0 || contains(types, "hangup") {
			return map[string]any{"type": "hangup"}
		}
		return map[string]any{"type": types[0], "target": "1000"}
	case models.Map:
		return map[string]any{}
	}
	if len(f.Enum) > 0 {
		return f.Enum[0]
	}
	if f.Pattern != "" {
		return e.fromPattern(f.Pattern)
	}
	return fmt.Sprintf("example %d", e.n)
}

func (e *examples) props(res *models.Resource, props []*models.Field) map[string]any {
	out := map[string]any{}
	for _, p := range props {
		if p.Required {
			out[p.Name] = e.value(res, p)
		}
	}
	return out
}

// object is an object of res created through the API (once per test).
func (e *examples) object(res *models.Resource) map[string]any {
	if rec, ok := e.made[res.Name]; ok {
		return rec
	}
	e.t.Helper()
	rec := e.s.Do(e.t, "POST", e.collection(res), e.s.Key, e.body(res)).Expect(e.t, 201).Map(e.t)
	e.made[res.Name] = rec
	return rec
}

// fromPattern is a string the pattern matches: the first alternative,
// the fewest repeats, and from a class a letter or a digit. Digits turn,
// and a string returned before is made again with the next digits, so the
// numbers of one tenant never collide in its number plan (a pattern that
// leaves no choice gives its one string again).
func (e *examples) fromPattern(pat string) string {
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		e.t.Fatalf("pattern %q: %v", pat, err)
	}
	for range 100 {
		if v := e.walkPattern(re); !e.given[v] {
			e.given[v] = true
			return v
		}
		e.stride = e.stride%8 + 1
	}
	return e.walkPattern(re)
}

// walkPattern builds one string re matches (see fromPattern).
func (e *examples) walkPattern(re *syntax.Regexp) string {
	var b strings.Builder
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			b.WriteString(string(re.Rune))
		case syntax.OpCharClass:
			b.WriteRune(e.pick(re.Rune))
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteRune('a')
		case syntax.OpPlus:
			walk(re.Sub[0])
		case syntax.OpRepeat:
			for i := 0; i < re.Min; i++ {
				walk(re.Sub[0])
			}
		case syntax.OpConcat:
			for _, s := range re.Sub {
				walk(s)
			}
		case syntax.OpAlternate:
			walk(re.Sub[0])
		case syntax.OpCapture:
			walk(re.Sub[0])
		}
	}
	walk(re)
	return b.String()
}

// pick chooses a rune of a class (pairs of inclusive ranges).
func (e *examples) pick(ranges []rune) rune {
	in := func(r rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= r && r <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	e.n += max(e.stride, 1)
	if d := rune('1' + e.n%9); in(d) {
		return d
	}
	for _, r := range []rune{'a', 'A', '0', '1'} {
		if in(r) {
			return r
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] > ' ' {
			return ranges[i]
		}
		if ranges[i+1] > ' ' {
			return '!'
		}
	}
	return 'a'
}

func resourceByNameT(name string) *models.Resource {
	for _, r := range models.Resources {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Every resource's example is accepted by the API's dry run: the browser
// tests fill the forms with them.
func TestExamplesAreValid(t *testing.T) {
	s := apptest.Start(t, apptest.AnyEnv(t), nil)
	e := newExamples(t, s, s.Tenant(t, "ex"))
	for _, res := range models.Resources {
		if res.Custom() || res.Singleton {
			continue
		}
		body := e.body(res)
		e.freeSlot(res, body)
		r := s.Do(t, "POST", e.collection(res)+"?dry_run=true", s.Key, body)
		if r.Status != 201 {
			t.Errorf("%s: example %v: %d %s", res.Name, body, r.Status, r.Body)
		}
	}
}

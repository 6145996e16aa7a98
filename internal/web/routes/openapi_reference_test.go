package routes_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models"
)

// The reference's sections (issue 26, item 6): the document lists its
// tags grouped (x-tagGroups: platform, tenant, calls, messaging, chat, CRM,
// and the web pages last), each named for people and described, in the
// order of the groups; every operation's tag is one of them.
func TestOpenAPITagsGrouped(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, apptest.AnyEnv(t), nil)
	var doc struct {
		Tags []struct {
			Name, Description string
		}
		Groups []struct {
			Name string
			Tags []string
		} `json:"x-tagGroups"`
		Paths map[string]map[string]struct {
			Tags []string
		}
	}
	s.Do(t, "GET", "/api/openapi.json", "", nil).Expect(t, 200).JSON(t, &doc)
	var groups []string
	for _, g := range doc.Groups {
		groups = append(groups, g.Name)
	}
	if got, want := strings.Join(groups, ", "), "Platform, Tenant configuration, Calls, Messaging, Chat, CRM, Web pages"; got != want {
		t.Errorf("tag groups %q, want %q", got, want)
	}
	// The tags list follows the groups, in their order.
	var grouped []string
	for _, g := range doc.Groups {
		grouped = append(grouped, g.Tags...)
	}
	listed := map[string]bool{}
	for i, tag := range doc.Tags {
		listed[tag.Name] = true
		if i < len(grouped) && grouped[i] != tag.Name {
			t.Errorf("tag %d is %q, want %q (the groups' order)", i, tag.Name, grouped[i])
		}
		if len(tag.Description) < 20 {
			t.Errorf("tag %q has no description worth the name: %q", tag.Name, tag.Description)
		}
		if regexp.MustCompile(`^[a-z]+_[a-z_]+$`).MatchString(tag.Name) || tag.Name != strings.ToUpper(tag.Name[:1])+tag.Name[1:] {
			t.Errorf("tag %q is not named for people", tag.Name)
		}
	}
	if len(grouped) != len(doc.Tags) {
		t.Errorf("%d tags in groups, %d listed", len(grouped), len(doc.Tags))
	}
	for path, item := range doc.Paths {
		for method, op := range item {
			if len(op.Tags) != 1 || !listed[op.Tags[0]] {
				t.Errorf("%s %s: tags %q are not among the listed tags", method, path, op.Tags)
			}
		}
	}
	if first := doc.Groups[0].Tags[0]; first != "Tenants" {
		t.Errorf("the reference starts with %q, want Tenants", first)
	}
	if last := doc.Groups[len(doc.Groups)-1].Tags; len(last) != 1 || last[0] != "Web pages" {
		t.Errorf("the last group holds %q, want the web pages", last)
	}
}

// Every *Create schema carries an example, and the server accepts each
// (issue 26, item 6: the reference's "Try it out" bodies were refused).
// Each example is sent in a tenant of its own, after the examples of the
// objects it refers to (a reference by id gets the id they were given).
func TestOpenAPICreateExamplesAccepted(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		var doc struct {
			Paths      map[string]map[string]json.RawMessage
			Components struct {
				Schemas map[string]struct {
					Example map[string]any `json:"example"`
				}
			}
		}
		s.Do(t, "GET", "/api/openapi.json", "", nil).Expect(t, 200).JSON(t, &doc)
		for name, sch := range doc.Components.Schemas {
			if strings.HasSuffix(name, "Create") && sch.Example == nil {
				t.Errorf("schema %s has no example", name)
			}
		}
		// The hand-written create of API keys.
		key := s.Do(t, "POST", "/api/key/", s.Key, doc.Components.Schemas["APIKeyCreate"].Example).Expect(t, 201).Map(t)
		s.Do(t, "DELETE", fmt.Sprint("/api/key/", key["id"]), s.Key, nil)
		for _, res := range models.Resources {
			if res.Custom() || res.Singleton {
				continue
			}
			t.Run(res.Name, func(t *testing.T) {
				ex := newExampleRun(t, s)
				ex.create(res)
			})
		}
	})
}

// exampleRun creates the reference's examples in a tenant of its own.
type exampleRun struct {
	t      *testing.T
	s      *apptest.Server
	tenant string
	made   map[string]map[string]any // created objects by resource
}

func newExampleRun(t *testing.T, s *apptest.Server) *exampleRun {
	return &exampleRun{t: t, s: s, tenant: s.Tenant(t, "ex"), made: map[string]map[string]any{}}
}

func (e *exampleRun) collection(res *models.Resource) string {
	if res.Scope == models.TenantScope {
		return "/api/tenants/" + e.tenant + "/" + res.Name + "/"
	}
	return "/api/" + res.Name + "/"
}

// create sends res's example (after its dependencies') and returns what
// was created, once per run.
func (e *exampleRun) create(res *models.Resource) map[string]any {
	e.t.Helper()
	if got, ok := e.made[res.Name]; ok {
		return got
	}
	body, deps := res.CreateExample()
	for _, d := range deps {
		target := e.resource(d.Resource)
		made := e.create(target)
		if d.ByID {
			if _, list := body[d.Field].([]any); list {
				body[d.Field] = []any{made["id"]}
			} else {
				body[d.Field] = made["id"]
			}
		}
	}
	e.clearUnique(res, body)
	r := e.s.Do(e.t, "POST", e.collection(res), e.s.Key, body)
	if r.Status != 201 {
		e.t.Fatalf("the %s example %v answered %d: %s", res.Name, body, r.Status, r.Body)
	}
	got := r.Map(e.t)
	e.made[res.Name] = got
	if res.Scope == models.Platform {
		e.t.Cleanup(func() { e.s.Do(e.t, "DELETE", e.collection(res)+fmt.Sprint(got[res.KeyField()]), e.s.Key, nil) })
	}
	return got
}

// clearUnique removes an object holding the example's unique values: a
// platform object an earlier run left (the database is shared), or a
// tenant's default (every tenant starts with each feature code).
func (e *exampleRun) clearUnique(res *models.Resource, body map[string]any) {
	var list []map[string]any
	e.s.Do(e.t, "GET", e.collection(res)+"?limit=1000", e.s.Key, nil).Expect(e.t, 200).JSON(e.t, &list)
	for _, o := range list {
		for _, u := range res.Unique {
			if len(u) == 1 && o[u[0]] == body[u[0]] {
				e.s.Do(e.t, "DELETE", e.collection(res)+fmt.Sprint(o[res.KeyField()]), e.s.Key, nil)
			}
		}
	}
}

func (e *exampleRun) resource(name string) *models.Resource {
	for _, r := range models.Resources {
		if r.Name == name {
			return r
		}
	}
	e.t.Fatalf("no resource %s", name)
	return nil
}

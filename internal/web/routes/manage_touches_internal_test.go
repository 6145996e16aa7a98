package routes

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/models"
)

// Every declared touch names a resource with pages and has the partial of
// each page it fills, and no partial is left without its touch.
func TestTouchesHaveTheirPartials(t *testing.T) {
	for name, tc := range touches {
		res := resourceByName(name)
		if res == nil || res.Custom() || res.Scope != models.TenantScope && res.Scope != models.Platform {
			t.Errorf("touch of %q: no resource with pages", name)
		}
		for page, set := range map[string]bool{"view": tc.view != nil, "form": tc.form != nil} {
			if has := pages.Lookup(touchTemplate(page, name)) != nil; has != set {
				t.Errorf("touch of %s: %s declared %v, partial %s present %v", name, page, set, touchTemplate(page, name), has)
			}
		}
	}
	for _, tmpl := range pages.Templates() {
		for _, p := range []string{"view", "form"} {
			if name, ok := strings.CutPrefix(tmpl.Name(), "touch-"+p+"-"); ok {
				if _, declared := touches[name]; !declared {
					t.Errorf("partial %s has no declared touch", tmpl.Name())
				}
			}
		}
	}
}

// A destination's target pickers are derived from models.DestinationRef:
// on a tenant form every type naming a listable object offers that
// object's column; types naming none (hangup, an outside number) have
// no picker.
func TestDestinationTargetPickers(t *testing.T) {
	ivr := resourceByName("ivr_menus")
	var dest fieldSpec
	for _, f := range ivr.Fields {
		if f.Name != "options" {
			continue
		}
		for _, p := range specOf(f, "acme", models.TenantScope).Props {
			if p.Kind == kindDestination {
				dest = p
			}
		}
	}
	if len(dest.Enum) == 0 {
		t.Fatal("the IVR options have no destination")
	}
	for _, typ := range dest.Enum {
		res, col, ok := models.DestinationRef(typ)
		p := dest.Targets[typ]
		if !ok {
			if p != nil {
				t.Errorf("type %s names no object but offers %+v", typ, p)
			}
			continue
		}
		target := resourceByName(res)
		if target.Singleton || target.Custom() {
			continue
		}
		if p == nil || p.Value != col || !strings.HasPrefix(p.List, "/api/tenants/acme/"+res+"/?") {
			t.Errorf("type %s: picker %+v, want %s of /api/tenants/acme/%s/", typ, p, col, res)
		}
	}
	if dest.Targets["queue"] == nil || dest.Targets["extension"] == nil {
		t.Errorf("no queue or extension picker: %+v", dest.Targets)
	}
}

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

package models_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestCloneMenusQueuesPromptsRemapsReferences: a clone with tenant_menus,
// tenant_queues and tenant_voiceprompts copies the IVR menu, its queue and
// its prompts; the menu's prompt ids and its options' destinations point
// at the copies (a prompt_then_hangup option at the copied prompt's new
// id), options to what was not copied (an extension) are dropped and
// reported, all in one transaction with a change event per copy.
func TestCloneMenusQueuesPromptsRemapsReferences(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		src := newTenant(t, st)
		prompt := mustCreate(t, st, "voice_prompts", src, `{"name":"Greeting"}`)
		other := mustCreate(t, st, "voice_prompts", src, `{"name":"Closed"}`)
		moh := mustCreate(t, st, "music_on_hold", src, `{"name":"jazz"}`)
		mustCreate(t, st, "queues", src, `{"name":"Support","number":"500","greeting_prompt_id":`+jsonID(prompt)+`,"moh_class_id":`+jsonID(moh)+`}`)
		mustCreate(t, st, "extensions", src, `{"name":"1001"}`)
		mustCreate(t, st, "ivr_menus", src, fmt.Sprintf(`{"name":"Main","number":"800","greeting_long_prompt_id":%s,
			"options":[{"digits":"1","destination":{"type":"queue","target":"500"}},
			           {"digits":"2","destination":{"type":"prompt_then_hangup","target":"%s"}},
			           {"digits":"3","destination":{"type":"extension","target":"1001"}}],
			"exit_destination":{"type":"extension","target":"1001"}}`, jsonID(prompt), jsonID(other)))
		if _, err := st.Update(ctx, st.Registry().Resource("tenants"), models.Owner{}, src.Tenant, decode(t, `{"moh_class_id":`+jsonID(moh)+`}`)); err != nil {
			t.Fatal(err)
		}

		var seen []changes.Change
		st.OnCommit(func(_ context.Context, chs []changes.Change) { seen = append(seen, chs...) })
		name := storetest.Name("ivrcopy")
		created, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{
			"tenant": name, "tenant_to_clone": src.Tenant, "tenant_menus": "1", "tenant_queues": "1", "tenant_voiceprompts": "1",
		})
		if err != nil {
			t.Fatalf("clone: %v", err)
		}
		dst, err := st.Tenant(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		list := func(res string) []models.Record {
			recs, _, err := st.List(ctx, st.Registry().Resource(res), dst, models.Page{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			return recs
		}
		prompts := map[string]int64{}
		for _, p := range list("voice_prompts") {
			prompts[p["name"].(string)] = p["id"].(int64)
		}
		if len(prompts) != 2 || prompts["Greeting"] == prompt["id"] || prompts["Closed"] == other["id"] {
			t.Fatalf("copied prompts %v (source ids %v, %v)", prompts, prompt["id"], other["id"])
		}
		mohs := list("music_on_hold")
		queues := list("queues")
		if len(mohs) != 1 || len(queues) != 1 || queues[0]["moh_class_id"] != mohs[0]["id"] || queues[0]["greeting_prompt_id"] != prompts["Greeting"] {
			t.Errorf("copied queue %v, music on hold %v", queues, mohs)
		}
		if created["moh_class_id"] != mohs[0]["id"] {
			t.Errorf("the clone's hold music is class %v, want the copy %v of the source's", created["moh_class_id"], mohs[0]["id"])
		}
		menus := list("ivr_menus")
		if len(menus) != 1 {
			t.Fatalf("copied menus %v", menus)
		}
		menu := menus[0]
		if menu["greeting_long_prompt_id"] != prompts["Greeting"] {
			t.Errorf("menu greeting %v, want the copy %d", menu["greeting_long_prompt_id"], prompts["Greeting"])
		}
		opts, _ := menu["options"].([]any)
		want := []any{
			map[string]any{"digits": "1", "destination": map[string]any{"type": "queue", "target": "500"}},
			map[string]any{"digits": "2", "destination": map[string]any{"type": "prompt_then_hangup", "target": fmt.Sprint(prompts["Closed"])}},
		}
		if fmt.Sprint(opts) != fmt.Sprint(want) {
			t.Errorf("menu options\n got %v\nwant %v", opts, want)
		}
		if menu["exit_destination"] != nil {
			t.Errorf("exit destination to an uncopied extension kept: %v", menu["exit_destination"])
		}
		report := fmt.Sprint(created["clone_report"])
		for _, w := range []string{"options[2].destination cleared (extension name 1001", "options[2] dropped", "exit_destination cleared"} {
			if !strings.Contains(report, w) {
				t.Errorf("clone report %s lacks %q", report, w)
			}
		}
		// The copied queue is referenced by the copied menu: deleting it
		// is refused like any referenced object.
		if err := st.Delete(ctx, st.Registry().Resource("queues"), dst, fmt.Sprint(queues[0]["id"])); err == nil || !strings.Contains(err.Error(), "still used by IVR menu Main") {
			t.Errorf("deleting the queue the copied menu uses: %v, want referenced", err)
		}
		// Without the classes the clone has no hold music of its own, and
		// the report says so.
		bare, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{
			"tenant": storetest.Name("nomoh"), "tenant_to_clone": src.Tenant, "tenant_queues": "1",
		})
		if err != nil {
			t.Fatalf("clone without prompts: %v", err)
		}
		if bare["moh_class_id"] != nil || !strings.Contains(fmt.Sprint(bare["clone_report"]), "moh_class_id cleared") {
			t.Errorf("clone without its classes: moh_class_id %v, report %v", bare["moh_class_id"], bare["clone_report"])
		}
		var made []string
		for _, c := range seen {
			if c.Tenant == name && c.Op == changes.Create {
				made = append(made, c.Resource)
			}
		}
		for _, r := range []string{"tenants", "voice_prompts", "music_on_hold", "queues", "ivr_menus"} {
			if !slices.Contains(made, r) {
				t.Errorf("no create change for %s in %v", r, made)
			}
		}
	})
}

// TestCloneIsOneTransaction: a clone that fails part way (a prompt whose
// file cannot be copied, here because no media library is configured)
// leaves no tenant and no copies behind.
func TestCloneIsOneTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		src := newTenant(t, st)
		mustCreate(t, st, "queues", src, `{"name":"Support","number":"500"}`)
		p := mustCreate(t, st, "voice_prompts", src, `{"name":"Greeting"}`)
		if _, err := st.Querier().ExecContext(ctx, "UPDATE voice_prompts SET filename = 'f.wav' WHERE id = ?", p["id"]); err != nil {
			t.Fatal(err)
		}
		name := storetest.Name("failcopy")
		_, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{
			"tenant": name, "tenant_to_clone": src.Tenant, "tenant_queues": "1", "tenant_voiceprompts": "1",
		})
		if !errors.Is(err, models.ErrNoAudioStore) {
			t.Fatalf("clone with an uncopyable file: %v", err)
		}
		if _, err := st.Tenant(ctx, name); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("tenant left behind: %v", err)
		}
		var n int
		if err := st.Querier().GetContext(ctx, &n, "SELECT COUNT(*) FROM queues q JOIN tenants t ON t.id = q.tenant_id WHERE t.tenant = ?", name); err != nil || n != 0 {
			t.Errorf("queues left behind: %d %v", n, err)
		}
	})
}

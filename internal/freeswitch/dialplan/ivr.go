package dialplan

import (
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// IVR menus (resources.md §2.13): the tenant context answers the menu's
// number and runs "ivr <tenant>_<id>", then sends the call to the exit
// destination when the menu gives up; ivr.conf serves the menu itself when
// the ivr application asks for it (Menu-Name). An option becomes one
// menu-exec-app entry running the single application its destination
// renders to (transfer, voicemail or hangup); prompt_then_hangup, which
// needs two (playback, hangup), transfers to the tenant context's
// "prompt-<id>" number, which plays the prompt and hangs up. A menu that
// allows direct dialling has one more entry, a regular expression of the
// tenant's enabled extension numbers (digits="/^(1001|1002)$/"), which
// transfers the caller to the number dialled ("transfer $1 XML <tenant>",
// the extension's own dialplan then applying DND, forwards and voicemail).

func (s *TenantSnapshot) ivrMenu(number string) *IVRMenu {
	for i := range s.IVRMenus {
		if s.IVRMenus[i].Number == number {
			return &s.IVRMenus[i]
		}
	}
	return nil
}

func (p *planner) ivrActions(m *IVRMenu) []action {
	acts := []action{act("answer", "")}
	if lang := firstValid(validLanguage, m.Language); lang != "" {
		acts = append(acts, set("default_language", lang))
	}
	acts = append(acts, act("ivr", naming.TenantObjectName(p.tenant, m.ID)))
	d := Destination{Type: "hangup"}
	if m.ExitDestination != nil && m.ExitDestination.Type != "" {
		d = *m.ExitDestination
	}
	after, ok := p.destination(d)
	if !ok {
		after = []action{act("hangup", "NORMAL_CLEARING")}
	} else {
		p.trace.Destination = &d
	}
	return append(acts, after...)
}

// IVRConf renders ivr.conf for the menu a fetch names (Menu-Name,
// "<tenant>_<id>") in snap's tenant, or NotFound.
func IVRConf(opts Options, req xmlcurl.Request, snap *TenantSnapshot, now time.Time) []byte {
	tenant, id, ok := naming.SplitTenantObjectName(req.Get("Menu-Name"))
	if !ok || snap == nil || !snap.Tenant.Enabled || !strings.EqualFold(tenant, snap.Tenant.Tenant) {
		return xmldoc.NotFound()
	}
	var m *IVRMenu
	for i := range snap.IVRMenus {
		if snap.IVRMenus[i].ID == id && snap.IVRMenus[i].Enabled {
			m = &snap.IVRMenus[i]
		}
	}
	if m == nil {
		return xmldoc.NotFound()
	}
	p := &planner{opts: opts, snap: snap, tenant: tenant, now: now, trace: &Trace{}}
	w := xmldoc.NewWriter(1024 + 128*len(m.Options))
	w.Raw(xmldoc.DocOpen)
	w.Raw("<section name=\"configuration\">\n<configuration name=\"ivr.conf\" description=\"IVR menus\">\n<menus>\n<menu")
	w.Attr("name", naming.TenantObjectName(tenant, m.ID))
	long := p.promptPath(i64toa(m.GreetingLongPromptID))
	w.Attr("greet-long", long)
	w.Attr("greet-short", firstNonEmpty(p.promptPath(i64toa(m.GreetingShortPromptID)), long))
	w.Attr("invalid-sound", firstNonEmpty(p.promptPath(i64toa(m.InvalidPromptID)), "ivr/ivr-that_was_an_invalid_entry.wav"))
	w.Attr("exit-sound", firstNonEmpty(p.promptPath(i64toa(m.ExitPromptID)), "voicemail/vm-goodbye.wav"))
	w.Attr("timeout", itoa(clampInt(m.TimeoutMS, 1000, 60000, 5000)))
	w.Attr("inter-digit-timeout", itoa(clampInt(m.InterDigitTimeoutMS, 500, 10000, 2000)))
	w.Attr("max-failures", itoa(clampInt(m.MaxFailures, 1, 10, 3)))
	w.Attr("max-timeouts", itoa(clampInt(m.MaxTimeouts, 1, 10, 3)))
	// FreeSWITCH's menu acts on the digits only once it holds digit-len
	// of them or the inter-digit timeout passes (seen on 1.10.12: with the
	// default 5, a one-digit option ran seconds after the key press). So
	// the menu collects exactly as many digits as its longest entry (a
	// literal option or a direct-dial number) can use; the configured
	// digit_len applies only to a menu without entries.
	direct, longest := directDialExpr(snap, m)
	for _, o := range m.Options {
		if menuDigitsOK(o.Digits) {
			longest = max(longest, len(o.Digits))
		}
	}
	digitLen := clampInt(m.DigitLen, 1, 10, 5)
	if longest > 0 {
		digitLen = longest
	}
	w.Attr("digit-len", itoa(digitLen))
	w.Raw(">\n")
	for _, o := range m.Options {
		if !menuDigitsOK(o.Digits) {
			continue
		}
		acts, ok := p.destination(o.Destination)
		if !ok {
			continue
		}
		if o.Destination.Type == "prompt_then_hangup" && p.promptPath(o.Destination.Target) != "" {
			acts = []action{p.transfer(promptPrefix + o.Destination.Target)}
		}
		var run []action
		for _, a := range acts {
			if a.app != "answer" {
				run = append(run, a)
			}
		}
		if len(run) != 1 {
			continue
		}
		w.Raw("<entry action=\"menu-exec-app\"")
		w.Attr("digits", o.Digits)
		w.Attr("param", run[0].app+" "+run[0].data)
		w.Raw("/>\n")
	}
	if direct != "" {
		w.Raw("<entry action=\"menu-exec-app\"")
		w.Attr("digits", direct)
		w.Attr("param", "transfer $1 XML "+tenant)
		w.Raw("/>\n")
	}
	w.Raw("</menu>\n</menus>\n</configuration>\n")
	xmldoc.CloseSection(w)
	return w.Bytes()
}

// directDialExpr is the menu's direct-dial entry: a regular expression
// (mod_dptools' menus take one between slashes and substitute $1) that
// matches exactly the tenant's enabled extension numbers, except those an
// option binds (a menu runs every entry that matches), and the longest of
// them; "" when the menu does not allow direct dialling or no number is
// left. Only extensions are listed, never a pattern, so a caller can reach
// no outbound route or feature code through it.
func directDialExpr(snap *TenantSnapshot, m *IVRMenu) (string, int) {
	if !m.DirectDial {
		return "", 0
	}
	taken := map[string]bool{}
	for _, o := range m.Options {
		taken[o.Digits] = true
	}
	var nums []string
	longest := 0
	for x := range snap.eachExtension() {
		if !x.Enabled || !validNumber(x.Name) || taken[x.Name] {
			continue
		}
		nums = append(nums, x.Name)
		longest = max(longest, len(x.Name))
	}
	if len(nums) == 0 {
		return "", 0
	}
	return "/^(" + strings.Join(nums, "|") + ")$/", longest
}

// menuDigitsOK reports whether an option's digits can be a menu entry: up
// to five dialable keys, no leading '+'.
func menuDigitsOK(d string) bool {
	return len(d) <= 5 && validDialable(d) && d[0] != '+'
}

package dialplan

import (
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// action is one dialplan <action>/<anti-action>. app is always one of our
// constants; data holds validated values only (see validate.go).
type action struct {
	app, data string
	inline    bool
}

// cond is one <condition>; field "" means a condition with no test (used
// for a last catch-all in multi-branch extensions).
type cond struct {
	field, expr, brk string
	actions, anti    []action
}

// ext is one dialplan <extension>.
type ext struct {
	name  string
	conds []cond
}

func act(app, data string) action { return action{app: app, data: data} }

func set(name, value string) action { return action{app: "set", data: name + "=" + value} }

// numberExpr is the anchored condition expression for a validated number.
func numberExpr(n string) string { return "^" + regexQuote(n) + "$" }

// writeDialplan renders a complete dialplan document with one context.
func writeDialplan(context string, exts []ext) []byte {
	w := xmldoc.NewWriter(512 + 512*len(exts))
	xmldoc.OpenSection(w, "dialplan")
	w.Raw("<context")
	w.Attr("name", context)
	w.Raw(">\n")
	for _, e := range exts {
		w.Raw("<extension")
		w.Attr("name", e.name)
		w.Raw(">\n")
		for _, c := range e.conds {
			w.Raw("<condition")
			if c.field != "" {
				w.Attr("field", c.field)
				w.Attr("expression", c.expr)
			}
			if c.brk != "" {
				w.Attr("break", c.brk)
			}
			if len(c.actions) == 0 && len(c.anti) == 0 {
				w.Raw("/>\n")
				continue
			}
			w.Raw(">\n")
			writeActions(w, "action", c.actions)
			writeActions(w, "anti-action", c.anti)
			w.Raw("</condition>\n")
		}
		w.Raw("</extension>\n")
	}
	w.Raw("</context>\n")
	xmldoc.CloseSection(w)
	return w.Bytes()
}

func writeActions(w *xmldoc.Writer, tag string, acts []action) {
	for _, a := range acts {
		w.Raw("<")
		w.Raw(tag)
		w.Attr("application", a.app)
		if a.data != "" {
			w.Attr("data", a.data)
		}
		if a.inline {
			w.Raw(` inline="true"`)
		}
		w.Raw("/>\n")
	}
}

// tollExpr matches a toll_allow list that contains level.
func tollExpr(level string) string { return "(^|,)" + level + "(,|$)" }

func validPermission(p string) bool {
	switch p {
	case "internal", "local", "national", "international":
		return true
	}
	return false
}

// validCause matches a Q.850 cause name such as NORMAL_CLEARING.
func validCause(s string) bool {
	return len(s) >= 1 && len(s) <= 40 && allIn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_")
}

func hasString(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

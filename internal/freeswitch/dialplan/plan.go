package dialplan

import "strings"

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
	w := newXW(512 + 512*len(exts))
	openSection(w, "dialplan")
	w.raw("<context")
	w.attr("name", context)
	w.raw(">\n")
	for _, e := range exts {
		w.raw("<extension")
		w.attr("name", e.name)
		w.raw(">\n")
		for _, c := range e.conds {
			w.raw("<condition")
			if c.field != "" {
				w.attr("field", c.field)
				w.attr("expression", c.expr)
			}
			if c.brk != "" {
				w.attr("break", c.brk)
			}
			if len(c.actions) == 0 && len(c.anti) == 0 {
				w.raw("/>\n")
				continue
			}
			w.raw(">\n")
			writeActions(w, "action", c.actions)
			writeActions(w, "anti-action", c.anti)
			w.raw("</condition>\n")
		}
		w.raw("</extension>\n")
	}
	w.raw("</context>\n")
	closeSection(w)
	return w.bytes()
}

func writeActions(w *xw, tag string, acts []action) {
	for _, a := range acts {
		w.raw("<")
		w.raw(tag)
		w.attr("application", a.app)
		if a.data != "" {
			w.attr("data", a.data)
		}
		if a.inline {
			w.raw(` inline="true"`)
		}
		w.raw("/>\n")
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

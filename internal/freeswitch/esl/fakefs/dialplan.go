package fakefs

import (
	"context"
	"encoding/xml"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// dialplanStep is what routing a channel through the XML dialplan decided:
// the actions of the extension that matched, in order, with the regex
// captures of their condition already substituted.
type dialplanStep struct {
	actions []dpAction
	// found is false when no extension matched (NO_ROUTE_DESTINATION).
	found bool
}

type dpAction struct {
	app, data string
	inline    bool
}

// dialplan XML as mod_xml_curl returns it (only what routing reads).
type dpDocument struct {
	Sections []struct {
		Name     string `xml:"name,attr"`
		Contexts []struct {
			Name       string `xml:"name,attr"`
			Extensions []struct {
				Name       string        `xml:"name,attr"`
				Conditions []dpCondition `xml:"condition"`
			} `xml:"extension"`
		} `xml:"context"`
		Result *struct {
			Status string `xml:"status,attr"`
		} `xml:"result"`
	} `xml:"section"`
}

type dpCondition struct {
	Field      string     `xml:"field,attr"`
	Expression string     `xml:"expression,attr"`
	Break      string     `xml:"break,attr"`
	Actions    []dpXMLApp `xml:"action"`
	Anti       []dpXMLApp `xml:"anti-action"`
}

type dpXMLApp struct {
	Application string `xml:"application,attr"`
	Data        string `xml:"data,attr"`
	Inline      string `xml:"inline,attr"`
}

// fetchForm starts a mod_xml_curl request as FreeSWITCH sends it: the
// binding's section and key, then the REQUEST_PARAMS event headers of
// this node.
func (s *Server) fetchForm(section, tagName, keyName, keyValue string) url.Values {
	form := url.Values{}
	form.Set("hostname", s.opts.Hostname)
	form.Set("section", section)
	form.Set("tag_name", tagName)
	form.Set("key_name", keyName)
	form.Set("key_value", keyValue)
	form.Set("Event-Name", "REQUEST_PARAMS")
	form.Set("Core-UUID", s.CoreUUID())
	form.Set("FreeSWITCH-Hostname", s.opts.Hostname)
	form.Set("FreeSWITCH-Switchname", s.opts.Hostname)
	form.Set("FreeSWITCH-IPv4", s.opts.IPv4)
	return form
}

// fetchDialplan asks the configured mod_xml_curl URL for the dialplan of c
// in context hunt, the way mod_dialplan_xml does: a form with the channel's
// caller profile and every channel variable (variable_<name>). Caller holds
// no lock.
func (s *Server) fetchDialplan(ctx context.Context, c Channel, hunt string) (*dpDocument, error) {
	form := s.fetchForm("dialplan", "", "", "")
	form.Set("Channel-Name", c.Name)
	form.Set("Unique-ID", c.UUID)
	form.Set("Call-Direction", c.Direction)
	form.Set("Caller-Context", hunt)
	form.Set("Caller-Destination-Number", c.Dest)
	form.Set("Caller-Caller-ID-Name", c.CIDName)
	form.Set("Caller-Caller-ID-Number", c.CIDNum)
	form.Set("Hunt-Context", hunt)
	form.Set("Hunt-Destination-Number", c.Dest)
	form.Set("Hunt-Caller-ID-Number", c.CIDNum)
	for _, v := range c.Vars {
		form.Set("variable_"+v.Name, v.Value)
	}
	body, err := s.postFetch(ctx, form)
	if err != nil {
		return nil, fmt.Errorf("fakefs dialplan fetch: %w", err)
	}
	var doc dpDocument
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("fakefs dialplan fetch: %w", err)
	}
	return &doc, nil
}

// routeChannel hunts c's destination in context hunt through the XML
// dialplan fetched for it, with c's own variables (huntContext).
func (s *Server) routeChannel(c Channel, hunt string) (dialplanStep, error) {
	ctx, cancel := contextWithTimeout(5 * time.Second)
	defer cancel()
	doc, err := s.fetchDialplan(ctx, c, hunt)
	if err != nil {
		return dialplanStep{}, err
	}
	vars := map[string]string{}
	for _, v := range c.Vars {
		vars[v.Name] = v.Value
	}
	field := func(name string) string {
		switch name {
		case "destination_number":
			return c.Dest
		case "caller_id_number":
			return c.CIDNum
		case "caller_id_name":
			return c.CIDName
		case "context":
			return hunt
		case "chan_name":
			return c.Name
		case "uuid":
			return c.UUID
		}
		if strings.Contains(name, "${") {
			return expandVars(name, vars)
		}
		return vars[name]
	}
	return huntContext(doc, hunt, field, vars)
}

// huntContext routes through context hunt of doc as mod_dialplan_xml does
// (parse_exten): conditions compare a caller profile field or an expanded
// ${variable} (field) with a regular expression; a passing condition adds
// its actions, a failing one its anti-actions; then the condition's break
// decides whether the extension's later conditions are looked at: on-false
// (the default) stops after a failing condition, on-true after a passing
// one, always after either, never after neither. The first extension that
// added any action or anti-action is the match; one that added none (its
// conditions passing without actions included) lets hunting go on. Inline
// set actions apply to vars at once.
func huntContext(doc *dpDocument, hunt string, field func(string) string, vars map[string]string) (dialplanStep, error) {
	for _, sec := range doc.Sections {
		if sec.Name != "dialplan" {
			continue
		}
		for _, cx := range sec.Contexts {
			if cx.Name != hunt {
				continue
			}
			for _, ext := range cx.Extensions {
				var acts []dpAction
				found := false
				for _, cond := range ext.Conditions {
					pass, caps := true, []string(nil)
					if cond.Field != "" {
						re, err := regexp.Compile(cond.Expression)
						if err != nil {
							return dialplanStep{}, fmt.Errorf("fakefs dialplan: expression %q: %w", cond.Expression, err)
						}
						caps = re.FindStringSubmatch(field(cond.Field))
						pass = caps != nil
					}
					list := cond.Actions
					if !pass {
						list = cond.Anti
					}
					for _, a := range list {
						found = true
						act := dpAction{app: a.Application, data: substitute(a.Data, caps), inline: a.Inline == "true"}
						if act.inline && act.app == "set" {
							if k, v, ok := strings.Cut(act.data, "="); ok {
								vars[k] = v
							}
							continue
						}
						acts = append(acts, act)
					}
					brk := cond.Break
					if brk == "" {
						brk = "on-false"
					}
					if (pass && brk == "on-true") || (!pass && brk == "on-false") || brk == "always" {
						break
					}
				}
				if found {
					return dialplanStep{actions: acts, found: true}, nil
				}
			}
		}
	}
	return dialplanStep{}, nil
}

// substitute replaces $1..$9 in data with the captures of the condition.
func substitute(data string, caps []string) string {
	if !strings.Contains(data, "$") || caps == nil {
		return data
	}
	var b strings.Builder
	for i := 0; i < len(data); i++ {
		if data[i] == '$' && i+1 < len(data) && data[i+1] >= '1' && data[i+1] <= '9' {
			if n := int(data[i+1] - '0'); n < len(caps) {
				b.WriteString(caps[n])
			}
			i++
			continue
		}
		b.WriteByte(data[i])
	}
	return b.String()
}

// expandVars replaces every ${name} with its value ("" when unset).
func expandVars(s string, vars map[string]string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(vars[s[i+2:i+j]])
		s = s[i+j+1:]
	}
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// Hunt routes a dialplan document as /fs/xml answers it (body) through
// context hunt the way mod_dialplan_xml would, for a channel with the given
// caller profile fields (destination_number, caller_id_number, ...) and
// channel variables, and returns the matched extension's applications as
// "app data" (inline sets applied, not listed); found is false when no
// extension matched. Tests use it to see which branch of a document a
// caller takes.
func Hunt(body []byte, hunt string, profile, vars map[string]string) (apps []string, found bool, err error) {
	var doc dpDocument
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, false, fmt.Errorf("fakefs hunt: %w", err)
	}
	own := maps.Clone(vars)
	if own == nil {
		own = map[string]string{}
	}
	field := func(name string) string {
		if strings.Contains(name, "${") {
			return expandVars(name, own)
		}
		if v, ok := profile[name]; ok {
			return v
		}
		return own[name]
	}
	step, err := huntContext(&doc, hunt, field, own)
	for _, a := range step.actions {
		apps = append(apps, strings.TrimSpace(a.app+" "+a.data))
	}
	return apps, step.found, err
}

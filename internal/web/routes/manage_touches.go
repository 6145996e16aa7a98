package routes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/web/webui"
)

// Per-resource touches of the configuration manager. Every resource's
// pages come from the registry; a few resources need more than their
// fields for a person to use them: a prompt is listened to, a schedule
// read as a week, an IVR's options as a table of digits, a queue's agents
// managed from the queue. Each touch is declared here, keyed by resource,
// as the data of a partial template named touch-<page>-<resource>
// (manage_touches.html) that the generic object page or form shows below
// its own content; the partials' script (manage_touches.js) writes through
// the same API routes as every form. A resource without a touch is
// unaffected, and no generic template names a resource.

// touch is a resource's additions to its pages.
type touch struct {
	// view is the data of touch-view-<resource>, under an object's fields.
	view func(s *server, m *manageCtx, rec models.Record) (any, error)
	// form is the data of touch-form-<resource>, after its create or edit
	// form (rec is nil on create).
	form func(m *manageCtx, rec models.Record, edit bool) any
}

// touches are the declared touches by resource name.
var touches = map[string]touch{
	"voice_prompts": {view: promptPlayerTouch, form: promptUploadTouch},
	"schedules":     {view: scheduleWeekTouch},
	"ivr_menus":     {view: ivrOptionsTouch},
	"queues":        {view: queueAgentsTouch},
}

// touchTemplate names the partial of a resource's page ("view", "form").
func touchTemplate(page, resource string) string { return "touch-" + page + "-" + resource }

// touchHTML renders the touch of m's resource on a page, or nothing.
func (s *server) touchHTML(m *manageCtx, page string, rec models.Record, edit bool) (template.HTML, error) {
	t, ok := touches[m.res.Name]
	if !ok {
		return "", nil
	}
	var data any
	switch {
	case page == "view" && t.view != nil:
		d, err := t.view(s, m, rec)
		if err != nil {
			return "", fmt.Errorf("the %s page's touch: %w", m.res.Name, err)
		}
		data = d
	case page == "form" && t.form != nil:
		data = t.form(m, rec, edit)
	default:
		return "", nil
	}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, touchTemplate(page, m.res.Name), data); err != nil {
		return "", fmt.Errorf("render the %s touch of %s: %w", page, m.res.Name, err)
	}
	return template.HTML(buf.String()), nil //nolint:gosec // html/template output
}

// touchRoutes serve the touches' script.
func touchRoutes() []Route {
	return []Route{
		{Method: "GET", Path: "/static/manage_touches.js", Summary: "The configuration manager's per-resource touches (prompt upload, a queue's agents)", Tag: "web", Produces: "text/javascript", Handler: func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
			c.Set(fiber.HeaderCacheControl, "no-cache")
			return c.Send(webui.ManageTouchesJS)
		}},
	}
}

// promptPlayer is a voice prompt's recording on its page.
type promptPlayer struct {
	// Audio is the API's download of the stored file ("" without one).
	Audio, Name, Duration string
}

func promptPlayerTouch(_ *server, m *manageCtx, rec models.Record) (any, error) {
	if str(rec["filename"]) == "" {
		return promptPlayer{Name: objectLabel(m.res, rec)}, nil
	}
	p := promptPlayer{Audio: m.api() + url.PathEscape(str(rec["id"])) + "/audio", Name: objectLabel(m.res, rec)}
	var ms float64
	if err := json.Unmarshal([]byte(str(rec["duration_ms"])), &ms); err == nil && ms > 0 {
		p.Duration = fmt.Sprintf("%.1f s", ms/1000)
	}
	return p, nil
}

// promptUpload is the file picker that fills a new prompt's audio_base64.
type promptUpload struct {
	Edit bool
	// Input is the generated form's audio_base64 input the file fills.
	Input string
}

func promptUploadTouch(_ *manageCtx, _ models.Record, edit bool) any {
	return promptUpload{Edit: edit, Input: "f-" + audioField}
}

// weekDay is one column of a schedule's week.
type weekDay struct {
	Name   string
	Ranges []string
}

// scheduleWeek is a schedule's open periods as a week.
type scheduleWeek struct {
	Days     []weekDay
	Open     bool
	Holidays []string
}

// dayNames name the day codes of open_periods.days.
var dayNames = map[string]string{"mon": "Monday", "tue": "Tuesday", "wed": "Wednesday", "thu": "Thursday", "fri": "Friday", "sat": "Saturday", "sun": "Sunday"}

func scheduleWeekTouch(_ *server, m *manageCtx, rec models.Record) (any, error) {
	var periods []struct {
		Days       []string `json:"days"`
		Start, End string
	}
	var holidays []struct {
		Name, Date string
		EndDate    string `json:"end_date"`
		AllDay     *bool  `json:"all_day"`
		Start, End string
		Yearly     bool
	}
	if err := remarshalInto(rec["open_periods"], &periods); err != nil {
		return nil, err
	}
	if err := remarshalInto(rec["holidays"], &holidays); err != nil {
		return nil, err
	}
	// The week's columns are the declared day codes, in their order.
	var codes []string
	if f := m.res.Field("open_periods"); f != nil {
		for _, p := range f.Props {
			if p.Name == "days" {
				codes = p.Enum
			}
		}
	}
	w := scheduleWeek{}
	for _, code := range codes {
		d := weekDay{Name: dayNames[code]}
		if d.Name == "" {
			d.Name = code
		}
		var starts []string
		for _, p := range periods {
			for _, pd := range p.Days {
				if pd == code {
					starts = append(starts, p.Start+"–"+p.End)
				}
			}
		}
		sort.Strings(starts) // HH:MM sorts as text
		d.Ranges = starts
		w.Open = w.Open || len(starts) > 0
		w.Days = append(w.Days, d)
	}
	for _, h := range holidays {
		s := h.Date
		if h.EndDate != "" && h.EndDate != h.Date {
			s += " to " + h.EndDate
		}
		if h.Name != "" {
			s = h.Name + ": " + s
		}
		if h.AllDay != nil && !*h.AllDay && h.Start != "" {
			s += ", " + h.Start + "–" + h.End
		}
		if h.Yearly {
			s += " (every year)"
		}
		w.Holidays = append(w.Holidays, s)
	}
	return w, nil
}

// remarshalInto reads a stored structured value into v.
func remarshalInto(val, v any) error {
	if val == nil {
		return nil
	}
	b, err := json.Marshal(val)
	if err != nil {
		return fmt.Errorf("read stored value: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("read stored value: %w", err)
	}
	return nil
}

// ivrOption is one row of an IVR's options: the digits a caller presses,
// what happens and to what (linked to its page when it is an object).
type ivrOption struct {
	Digits, Action, Target, URL string
}

type ivrOptions struct{ Options []ivrOption }

func ivrOptionsTouch(s *server, m *manageCtx, rec models.Record) (any, error) {
	var opts []struct {
		Digits      string `json:"digits"`
		Destination struct {
			Type   string `json:"type"`
			Target any    `json:"target"`
		} `json:"destination"`
	}
	if err := remarshalInto(rec["options"], &opts); err != nil {
		return nil, err
	}
	out := ivrOptions{}
	for _, o := range opts {
		row := ivrOption{Digits: o.Digits, Action: label(o.Destination.Type), Target: str(o.Destination.Target)}
		if err := s.describeTarget(m, o.Destination.Type, &row); err != nil {
			return nil, err
		}
		out.Options = append(out.Options, row)
	}
	return out, nil
}

// describeTarget names a destination's target object and links its page.
func (s *server) describeTarget(m *manageCtx, typ string, row *ivrOption) error {
	name, col, ok := models.DestinationRef(typ)
	target := resourceByName(name)
	if !ok || target == nil || row.Target == "" {
		return nil
	}
	// Records reads stored columns; only the label and key are shown.
	recs, err := s.Store.Records(m.c.UserContext(), target, m.owner, map[string]any{col: row.Target})
	if err != nil || len(recs) == 0 {
		return err
	}
	if lbl := objectLabel(target, recs[0]); lbl != row.Target {
		row.Target = lbl + " (" + row.Target + ")"
	}
	if !target.Singleton {
		row.URL = resourcePage(target, m.tenant) + url.PathEscape(str(recs[0][target.KeyField()]))
	}
	return nil
}

// queueAgent is an agent on a queue's page: its tier in the queue (level
// and position) and its status.
type queueAgent struct {
	ID, Name, Number, Status, URL, API string
	Level, Position                    int64
}

// queueAgents are a queue's agents and the agents that may be added.
type queueAgents struct {
	QueueID string
	Members []queueAgent
	Others  []queueAgent
	// CanEdit: the API would let this administrator change agents.
	CanEdit bool
	// NewAgent is the agents' create form ("" when not permitted).
	NewAgent string
	// More: the tenant has more agents than one page reads.
	More bool
}

// agentTier is one entry of an agent's queues (mod_callcenter tiers).
type agentTier struct {
	QueueID  int64 `json:"queue_id"`
	Level    int64 `json:"level"`
	Position int64 `json:"position"`
}

func queueAgentsTouch(s *server, m *manageCtx, rec models.Record) (any, error) {
	am := &manageCtx{c: m.c, p: m.p, res: resourceNamed("agents"), owner: m.owner, tenant: m.tenant}
	recs, total, err := s.Store.List(m.c.UserContext(), am.res, m.owner, models.Page{Limit: maxLimit})
	if err != nil {
		return nil, err
	}
	v := queueAgents{QueueID: str(rec["id"]), CanEdit: am.may("update"), More: total > len(recs)}
	if am.may("create") {
		v.NewAgent = am.base() + "new"
	}
	for _, a := range recs {
		var tiers []agentTier
		if err := remarshalInto(a["queues"], &tiers); err != nil {
			return nil, err
		}
		qa := queueAgent{ID: str(a["id"]), Name: str(a["name"]), Number: str(a["agent_number"]), Status: agentStatus(str(a["status"])),
			URL: am.objectPage(a), API: am.api() + url.PathEscape(str(a["id"]))}
		in := false
		for _, t := range tiers {
			if str(t.QueueID) == v.QueueID {
				qa.Level, qa.Position, in = t.Level, t.Position, true
			}
		}
		if in {
			v.Members = append(v.Members, qa)
		} else {
			v.Others = append(v.Others, qa)
		}
	}
	sort.SliceStable(v.Members, func(i, j int) bool {
		a, b := v.Members[i], v.Members[j]
		if a.Level != b.Level {
			return a.Level < b.Level
		}
		return a.Position < b.Position
	})
	return v, nil
}

// agentStatus words an agent's status ("available_on_demand" →
// "Available (on demand)").
func agentStatus(s string) string {
	if rest, ok := strings.CutSuffix(s, "_on_demand"); ok {
		return label(rest) + " (on demand)"
	}
	return label(s)
}

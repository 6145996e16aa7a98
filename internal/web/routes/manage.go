package routes

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
)

// The configuration manager: a list, a view, a create and an edit form
// for every resource of the registry, derived from its declarations as the
// API is (a new resource gets its pages without page code). Pages read
// with the store's list and get, under the route's declared access; forms
// write through the same /api routes as any client (session cookie and
// CSRF header), so there is one validation, and check each field as it is
// left with ?dry_run=true. Buttons the API would refuse are not offered
// (Principal.permits asks authorize's own checks).

// managePageAnswers are the statuses a manager page answers with HTML.
var managePageAnswers = []int{fiber.StatusBadRequest, fiber.StatusForbidden, fiber.StatusNotFound}

func (s *server) manageRoutes() []Route {
	html := fiber.MIMETextHTML
	tenant := Access{Perm: "config.read", Scope: ScopeTenant}
	platform := Access{Perm: "config.read", Scope: ScopePlatform}
	page := func(path, summary string, a Access, q []string, h fiber.Handler) Route {
		return Route{Method: "GET", Path: path, Summary: summary, Tag: "web", Auth: AuthPage, Access: a, Produces: html, Query: q, HTMLAnswers: managePageAnswers, Handler: h}
	}
	// Lists also take the declared filters of their resource (as its API
	// list does); a page shows 50 objects.
	listQuery := []string{"offset", models.QuerySearch, models.QuerySort}
	return []Route{
		{Method: "GET", Path: "/static/manage.js", Summary: "The configuration manager's form script", Tag: "web", Produces: "text/javascript", Handler: func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
			c.Set(fiber.HeaderCacheControl, "no-cache")
			return c.Send(manageJS)
		}},
		page("/switch-tenant", "The tenant switcher: to the same page of another tenant", Access{Scope: ScopeVisible}, []string{"tenant", "page"}, s.switchTenant),
		page("/tenants/:tenant/", "A tenant's page in the configuration manager: its settings and its resources", tenant, nil, s.manageTenantHome),
		page("/tenants/:tenant/:resource/", "The configuration manager's list of a tenant resource (its view for a singleton)", tenant, listQuery, s.manageList),
		page("/tenants/:tenant/:resource/new", "The create form of a tenant resource", tenant, nil, s.manageForm(false)),
		page("/tenants/:tenant/:resource/:key", "A tenant object's page (the edit form of a singleton at …/edit)", tenant, nil, s.manageItem),
		page("/tenants/:tenant/:resource/:key/edit", "The edit form of a tenant object", tenant, nil, s.manageForm(true)),
		page("/manage/", "The platform resources of the configuration manager", platform, nil, s.managePlatformHome),
		page("/manage/:resource/", "The configuration manager's list of a platform resource", platform, listQuery, s.manageList),
		page("/manage/:resource/new", "The create form of a platform resource", platform, nil, s.manageForm(false)),
		page("/manage/:resource/:key", "A platform object's page", platform, nil, s.manageItem),
		page("/manage/:resource/:key/edit", "The edit form of a platform object", platform, nil, s.manageForm(true)),
	}
}

// managed are the resources with pages: every generated one (API keys
// keep their menu section).
func managed(scope models.Scope) []*models.Resource {
	var out []*models.Resource
	for _, r := range models.Resources {
		if !r.Custom() && r.Scope == scope {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(plural(out[i])) < strings.ToLower(plural(out[j])) })
	return out
}

// manageCtx is what a manager page knows of its request: the resource,
// the tenant (tenant pages) and who asks.
type manageCtx struct {
	c      *fiber.Ctx
	p      *Principal
	res    *models.Resource
	owner  models.Owner
	tenant string
}

// pageResource resolves the :resource of a manager page in the scope of
// its path.
func pageResource(c *fiber.Ctx) (*manageCtx, error) {
	m := &manageCtx{c: c, p: principal(c), owner: tenantOwner(c), tenant: tenantOwner(c).Tenant}
	scope := models.Platform
	if m.tenant != "" {
		scope = models.TenantScope
	}
	name := c.Params("resource")
	for _, r := range managed(scope) {
		if r.Name == name {
			m.res = r
			return m, nil
		}
	}
	return nil, newError(fiber.StatusNotFound, "not_found", "no page "+c.Path())
}

// base is the pages' path of the resource.
func (m *manageCtx) base() string { return resourcePage(m.res, m.tenant) }

// resourcePage is where a resource's pages live.
func resourcePage(res *models.Resource, tenant string) string {
	if res.Scope == models.TenantScope {
		return "/tenants/" + url.PathEscape(tenant) + "/" + res.Name + "/"
	}
	return "/manage/" + res.Name + "/"
}

// api is the API collection the pages' forms write to.
func (m *manageCtx) api() string { return apiCollection(m.res, m.tenant) }

func apiCollection(res *models.Resource, tenant string) string {
	if res.Scope == models.TenantScope {
		p := "/api/tenants/" + url.PathEscape(tenant) + "/" + res.Name
		if res.Singleton {
			return p
		}
		return p + "/"
	}
	return "/api/" + res.Name + "/"
}

// may reports whether the API would let the principal do op.
func (m *manageCtx) may(op string) bool {
	return m.p.permits(crudAccess(m.res, op), m.tenant)
}

// objectPage is an object's page.
func (m *manageCtx) objectPage(rec models.Record) string {
	if m.res.Name == "tenants" {
		return "/tenants/" + url.PathEscape(str(rec["tenant"])) + "/"
	}
	if m.res.Singleton {
		return strings.TrimSuffix(m.base(), "/")
	}
	return m.base() + url.PathEscape(str(rec[m.res.KeyField()]))
}

// managePage is what every manager page template reads.
type managePage struct {
	page
	Crumbs []crumb
	// Tenant is the tenant the page acts in ("" on platform pages);
	// Tenants are the ones the switcher offers (when more than one).
	Tenant  string
	Tenants []string
	// SwitchPage is the page the switcher opens in the chosen tenant.
	SwitchPage string
	// Nav are the resource links of the side menu.
	Nav []navLink
	// Tools are the tools' pages the principal may open (manage_tools.go).
	Tools      []navLink
	Platform   bool
	CSRFHeader string
}

type crumb struct{ Label, URL string }

type navLink struct {
	Label, URL string
	Current    bool
}

// frame fills what every manager page shows: the header, the tenant
// switcher and the side menu.
func (s *server) frame(m *manageCtx, title string, crumbs ...crumb) (managePage, error) {
	p := m.p
	mp := managePage{page: page{Title: title, Admin: p.username, Role: p.role, CSRF: p.session.CSRF}, Tenant: m.tenant, Platform: p.Platform(), CSRFHeader: CSRFHeader}
	mp.Crumbs = append([]crumb{{"Menu", "/"}}, crumbs...)
	if m.tenant != "" {
		tenants, _, err := s.Store.List(m.c.UserContext(), resourceNamed("tenants"), models.Owner{},
			models.Page{Limit: menuTenantLimit, Only: visibleTenants(p)})
		if err != nil {
			return mp, err
		}
		for _, t := range tenants {
			mp.Tenants = append(mp.Tenants, str(t["tenant"]))
		}
		if len(mp.Tenants) < 2 {
			mp.Tenants = nil
		}
		mp.SwitchPage = ""
		if m.res != nil {
			mp.SwitchPage = m.res.Name
		}
		for _, r := range managed(models.TenantScope) {
			mp.Nav = append(mp.Nav, navLink{Label: plural(r), URL: resourcePage(r, m.tenant), Current: m.res == r})
		}
	} else if p.Platform() {
		for _, r := range managed(models.Platform) {
			mp.Nav = append(mp.Nav, navLink{Label: plural(r), URL: resourcePage(r, ""), Current: m.res == r})
		}
	}
	mp.Tools = toolLinks(m)
	return mp, nil
}

// plural is a resource's name for a list heading ("Extensions").
func plural(r *models.Resource) string {
	if r.Singleton {
		return upperFirst(r.Title)
	}
	return upperFirst(pluralTitle(r.Title))
}

// pluralTitle is the plural of a resource's title, for list headings and
// the OpenAPI document's tags ("music-on-hold classes", "API keys"); a
// title already plural ("company directory settings") stays.
func pluralTitle(t string) string {
	switch {
	case strings.HasSuffix(t, "y") && !strings.HasSuffix(t, "ay") && !strings.HasSuffix(t, "ey"):
		return t[:len(t)-1] + "ies"
	case strings.HasSuffix(t, "ss"), strings.HasSuffix(t, "x"), strings.HasSuffix(t, "ch"):
		return t + "es"
	case strings.HasSuffix(t, "s"):
		return t
	}
	return t + "s"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// label is a field's name for people ("callerid_name" → "Callerid name").
func label(name string) string {
	return upperFirst(strings.ReplaceAll(name, "_", " "))
}

// switchTenant opens the same page in the chosen tenant; that page's own
// access decides whether it may be seen.
func (s *server) switchTenant(c *fiber.Ctx) error {
	tenant := strings.TrimSpace(c.Query("tenant"))
	if tenant == "" {
		return c.Redirect("/", fiber.StatusSeeOther)
	}
	to := "/tenants/" + url.PathEscape(tenant) + "/"
	if res := c.Query("page"); res != "" {
		for _, r := range managed(models.TenantScope) {
			if r.Name == res {
				to += r.Name + "/"
			}
		}
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

// homeView is a tenant's page and the platform page: its settings and
// links to every resource.
type homeView struct {
	managePage
	Heading string
	Object  *objectView
	Links   []navLink
}

func (s *server) manageTenantHome(c *fiber.Ctx) error {
	m := &manageCtx{c: c, p: principal(c), owner: tenantOwner(c), tenant: tenantOwner(c).Tenant}
	mp, err := s.frame(m, "Tenant "+m.tenant, crumb{"Tenant " + m.tenant, ""})
	if err != nil {
		return err
	}
	tm := &manageCtx{c: c, p: m.p, res: resourceNamed("tenants")}
	rec, err := s.Store.Get(c.UserContext(), tm.res, models.Owner{}, m.tenant)
	if err != nil {
		return err
	}
	v := homeView{managePage: mp, Heading: "Tenant " + m.tenant, Links: mp.Nav}
	v.Object = tm.object(rec)
	return render(c, fiber.StatusOK, "manage_home.html", v)
}

func (s *server) managePlatformHome(c *fiber.Ctx) error {
	m := &manageCtx{c: c, p: principal(c)}
	mp, err := s.frame(m, "Platform", crumb{"Platform", ""})
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, "manage_home.html", homeView{managePage: mp, Heading: "Platform", Links: mp.Nav})
}

// listView is a resource's list page.
type listView struct {
	managePage
	Heading   string
	NewURL    string
	Columns   []string
	Rows      []listRow
	Total     int
	From, To  int
	PrevURL   string
	NextURL   string
	Listing   bool
	Search    string
	Filters   []filterInput
	Sort      string
	SortOpts  []string
	ListError string
	liveParts
}

type listRow struct {
	URL, Label string
	Cells      []string
}

type filterInput struct {
	Name, Label, Value string
	Enum               []string
	Bool               bool
}

const managePageSize = 50

func (s *server) manageList(c *fiber.Ctx) error {
	m, err := pageResource(c)
	if err != nil {
		return err
	}
	if m.res.Singleton {
		return s.manageView(m, "")
	}
	heading := plural(m.res)
	mp, err := s.frame(m, heading, s.tenantCrumbs(m, crumb{heading, ""})...)
	if err != nil {
		return err
	}
	v := listView{managePage: mp, Heading: heading, Listing: m.res.Listing != nil}
	if m.may("create") {
		v.NewURL = m.base() + "new"
	}
	pg, err := pageParams(c)
	if err != nil {
		return err
	}
	pg.Limit = managePageSize
	if m.res.Name == "tenants" {
		pg.Only = visibleTenants(m.p)
	}
	// The list's query is the API's (search, declared filters, sort),
	// read by the same parser; the form leaves empty inputs out.
	query := url.Values{}
	raw, _ := url.ParseQuery(string(c.Request().URI().QueryString()))
	for k, vals := range raw {
		if k == "offset" {
			continue
		}
		if len(vals) == 1 && strings.TrimSpace(vals[0]) == "" {
			continue
		}
		query[k] = vals
	}
	status := fiber.StatusOK
	if pg.Query, err = models.ParseListQuery(m.res, query); err != nil {
		status = fiber.StatusBadRequest
		v.ListError = err.Error()
		pg.Query = models.ListQuery{}
	}
	if l := m.res.Listing; l != nil {
		v.Search, v.Sort = query.Get(models.QuerySearch), query.Get(models.QuerySort)
		for _, f := range l.SortFields() {
			v.SortOpts = append(v.SortOpts, f, "-"+f)
		}
		for _, name := range l.Filter {
			f := m.res.Field(name)
			v.Filters = append(v.Filters, filterInput{Name: name, Label: label(name), Value: query.Get(name), Enum: f.Enum, Bool: f.Type == models.Bool})
		}
	}
	recs, total, err := s.Store.List(c.UserContext(), m.res, m.owner, pg)
	if err != nil {
		return err
	}
	cols := listColumns(m.res)
	v.Columns = make([]string, len(cols))
	for i, f := range cols {
		v.Columns[i] = label(f.Name)
	}
	for _, rec := range recs {
		row := listRow{URL: m.objectPage(rec), Label: objectLabel(m.res, rec)}
		for _, f := range cols {
			row.Cells = append(row.Cells, shortValue(f, rec[f.Name]))
		}
		v.Rows = append(v.Rows, row)
	}
	if err := s.liveList(m, recs, &v); err != nil {
		return err
	}
	v.Total = total
	if len(recs) > 0 {
		v.From, v.To = pg.Offset+1, pg.Offset+len(recs)
	}
	page := func(offset int) string {
		q := url.Values{}
		for k, vals := range query {
			q[k] = vals
		}
		q.Set("offset", strconv.Itoa(offset))
		return c.Path() + "?" + q.Encode()
	}
	if pg.Offset > 0 {
		v.PrevURL = page(max(0, pg.Offset-pg.Limit))
	}
	if pg.Offset+pg.Limit < total {
		v.NextURL = page(pg.Offset + pg.Limit)
	}
	return render(c, status, "manage_list.html", v)
}

// tenantCrumbs puts the tenant's page before a tenant page's own crumbs.
func (s *server) tenantCrumbs(m *manageCtx, rest ...crumb) []crumb {
	if m.tenant == "" {
		return append([]crumb{{"Platform", "/manage/"}}, rest...)
	}
	return append([]crumb{{"Tenant " + m.tenant, "/tenants/" + url.PathEscape(m.tenant) + "/"}}, rest...)
}

// labelField is the field that names an object for people: a text key,
// else name, title, username, subject or number, else the first required
// text field.
func labelField(res *models.Resource) *models.Field {
	if k := res.Field(res.KeyField()); k != nil && k.Type == models.String {
		return k
	}
	for _, n := range []string{"name", "title", "username", "subject", "number", "display_name", "email"} {
		if f := res.Field(n); f != nil && f.Type == models.String && f.Secret == models.NotSecret {
			return f
		}
	}
	for _, f := range res.Fields {
		if f.Required && f.Type == models.String && f.Secret == models.NotSecret && !f.Input {
			return f
		}
	}
	return nil
}

// objectLabel names one object: its label field, else its key.
func objectLabel(res *models.Resource, rec models.Record) string {
	if f := labelField(res); f != nil {
		if s := str(rec[f.Name]); s != "" {
			return s
		}
	}
	if res.Singleton {
		return upperFirst(res.Title)
	}
	return upperFirst(res.Title) + " " + str(rec[res.KeyField()])
}

// listColumns are the few fields a list shows beside the label: required
// and then other scalar fields, never secrets, at most four.
func listColumns(res *models.Resource) []*models.Field {
	lf := labelField(res)
	var req, other []*models.Field
	for _, f := range res.Fields {
		if f == lf || f.Secret != models.NotSecret || f.Input || f.Name == "description" {
			continue
		}
		switch f.Type {
		case models.String, models.Int, models.Bool, models.Number:
		default:
			continue
		}
		if f.Required {
			req = append(req, f)
		} else if !f.ReadOnly {
			other = append(other, f)
		}
	}
	cols := append(req, other...)
	if len(cols) > 4 {
		cols = cols[:4]
	}
	return cols
}

// shortValue is a value as a list cell shows it.
func shortValue(f *models.Field, v any) string {
	s := displayValue(f, v)
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// displayValue is a value as a person reads it.
func displayValue(f *models.Field, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case string:
		return x
	case int64, float64, int, json.Number:
		return fmt.Sprint(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// objectView is an object's page.
type objectView struct {
	Heading   string
	Fields    []viewField
	EditURL   string
	DeleteAPI string
	ListURL   string
	// Tools are the object's tool pages (a webhook's delivery log).
	Tools []navLink
}

type viewField struct {
	Label, Doc, Value string
	Secret, Block     bool
	URL               string
}

// object describes rec for its page.
func (m *manageCtx) object(rec models.Record) *objectView {
	o := &objectView{Heading: objectLabel(m.res, rec), ListURL: m.base(), Tools: objectTools(m, rec)}
	if m.may("update") {
		o.EditURL = m.objectPage(rec)
		if m.res.Name == "tenants" {
			o.EditURL = m.base() + url.PathEscape(str(rec["tenant"]))
		}
		o.EditURL += "/edit"
	}
	if !m.res.Singleton && m.may("delete") {
		o.DeleteAPI = m.api() + url.PathEscape(str(rec[m.res.KeyField()]))
	}
	if m.res.HasID() {
		o.Fields = append(o.Fields, viewField{Label: "Id", Value: str(rec["id"])})
	}
	for _, f := range m.res.Fields {
		if f.Input {
			continue
		}
		vf := viewField{Label: label(f.Name), Doc: f.Doc}
		switch {
		case f.Secret == models.Hashed || f.Secret == models.Digest:
			vf.Secret, vf.Value = true, "set (never shown)"
		case f.Secret == models.Encrypted && !f.Masked:
			vf.Secret, vf.Value = true, "set (shown in the edit form only to replace it)"
			if rec[f.Name] == nil {
				vf.Value = ""
			}
		default:
			vf.Value = displayValue(f, rec[f.Name])
		}
		switch f.Type {
		case models.Object, models.ObjectList, models.Map, models.Destination, models.IntList, models.StringList:
			vf.Block = true
			if b, err := json.MarshalIndent(rec[f.Name], "", "  "); err == nil && rec[f.Name] != nil {
				vf.Value = string(b)
			}
		}
		if f.Ref != "" && m.res.Scope == models.TenantScope && vf.Value != "" && (f.Type == models.String || f.Type == models.Int) {
			if target := resourceByName(f.Ref); target != nil && target.Scope == models.TenantScope && !target.Singleton && f.RefColumn(target) == target.KeyField() {
				vf.URL = resourcePage(target, m.tenant) + url.PathEscape(vf.Value)
			}
		}
		o.Fields = append(o.Fields, vf)
	}
	for _, n := range []string{"created_at", "updated_at"} {
		if v := str(rec[n]); v != "" {
			o.Fields = append(o.Fields, viewField{Label: label(n), Value: v})
		}
	}
	return o
}

// resourceByName is a registry resource, or nil.
func resourceByName(name string) *models.Resource {
	for _, r := range models.Resources {
		if r.Name == name {
			return r
		}
	}
	return nil
}

type itemView struct {
	managePage
	Object *objectView
	liveParts
	// Touch is the resource's own addition to the page (manage_touches.go).
	Touch template.HTML
}

// manageItem is an object's page (a singleton's edit form at …/edit).
func (s *server) manageItem(c *fiber.Ctx) error {
	m, err := pageResource(c)
	if err != nil {
		return err
	}
	key := c.Params("key")
	if m.res.Singleton {
		if key != "edit" {
			return newError(fiber.StatusNotFound, "not_found", "no page "+c.Path())
		}
		return s.formPage(m, true, "")
	}
	return s.manageView(m, key)
}

func (s *server) manageView(m *manageCtx, key string) error {
	rec, err := s.Store.Get(m.c.UserContext(), m.res, m.owner, key)
	if err != nil {
		return err
	}
	obj := m.object(rec)
	crumbs := []crumb{{plural(m.res), m.base()}, {obj.Heading, ""}}
	if m.res.Singleton {
		crumbs = crumbs[1:]
	}
	mp, err := s.frame(m, obj.Heading, s.tenantCrumbs(m, crumbs...)...)
	if err != nil {
		return err
	}
	live, err := s.liveView(m, rec)
	if err != nil {
		return err
	}
	touch, err := s.touchHTML(m, "view", rec, false)
	if err != nil {
		return err
	}
	return render(m.c, fiber.StatusOK, "manage_view.html", itemView{managePage: mp, Object: obj, liveParts: live, Touch: touch})
}

// formView is a create or edit form.
type formView struct {
	managePage
	Heading string
	// Method and Action are the API request the form sends.
	Method, Action string
	// Done is where the browser goes after the write: "" shows the
	// answer's secrets first (create with generated secrets).
	Done, Cancel string
	// ViewBase is the object pages' path (the new object's page is its key
	// after it).
	ViewBase string
	KeyField string
	Edit     bool
	Sections []formSection
	// SecretsJSON names the fields a create answer shows once.
	SecretsJSON string
	// Touch is the resource's own addition to the form (manage_touches.go).
	Touch template.HTML
}

// formSection is a run of a form's fields; Legend and Doc name a group.
type formSection struct {
	Legend, Doc string
	Fields      []formField
	group       string
}

// groupDocs word the field groups of forms.
var groupDocs = map[string][2]string{
	"clone": {"Copy from an existing tenant (optional)", "Name a tenant to copy from and tick what to copy; leave the name empty to start empty."},
}

// sections splits fields into runs of the same group.
func sections(fields []formField) []formSection {
	var out []formSection
	for _, f := range fields {
		if n := len(out); n == 0 || out[n-1].group != f.Group {
			d := groupDocs[f.Group]
			out = append(out, formSection{Legend: d[0], Doc: d[1], group: f.Group})
		}
		out[len(out)-1].Fields = append(out[len(out)-1].Fields, f)
	}
	return out
}

func (s *server) manageForm(edit bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		m, err := pageResource(c)
		if err != nil {
			return err
		}
		if m.res.Singleton && !edit {
			return newError(fiber.StatusNotFound, "not_found", "no page "+c.Path())
		}
		return s.formPage(m, edit, c.Params("key"))
	}
}

func (s *server) formPage(m *manageCtx, edit bool, key string) error {
	op := "create"
	if edit {
		op = "update"
	}
	if !m.may(op) {
		return forbidden("this administrator may not " + op + " " + plural(m.res))
	}
	v := formView{Edit: edit, Method: "POST", Action: m.api(), Cancel: m.base(), ViewBase: m.base(), KeyField: m.res.KeyField()}
	var rec models.Record
	if edit {
		var err error
		if rec, err = s.Store.Get(m.c.UserContext(), m.res, m.owner, key); err != nil {
			return err
		}
		v.Method, v.Done, v.Cancel = "PUT", m.objectPage(rec), m.objectPage(rec)
		if !m.res.Singleton {
			v.Action = m.api() + url.PathEscape(key)
		}
		v.Heading = "Change " + objectLabel(m.res, rec)
	} else {
		v.Heading = "New " + m.res.Title
	}
	if m.res.Name == "tenants" {
		v.ViewBase = "/tenants/"
	}
	v.Sections = sections(formFields(m.res, m.tenant, rec, edit))
	secrets := []string{}
	for _, f := range m.res.Fields {
		if f.Secret == models.Encrypted && !f.Masked || f.Secret == models.Digest || f.Generate != nil {
			secrets = append(secrets, f.Name)
		}
	}
	for _, f := range m.res.CreateAnswer {
		secrets = append(secrets, f.Name)
	}
	b, _ := json.Marshal(secrets)
	v.SecretsJSON = string(b)
	crumbs := []crumb{{plural(m.res), m.base()}}
	if edit && !m.res.Singleton {
		crumbs = append(crumbs, crumb{objectLabel(m.res, rec), m.objectPage(rec)})
	}
	if m.res.Singleton {
		crumbs = []crumb{{upperFirst(m.res.Title), m.objectPage(rec)}}
	}
	mp, err := s.frame(m, v.Heading, s.tenantCrumbs(m, append(crumbs, crumb{v.Heading, ""})...)...)
	if err != nil {
		return err
	}
	v.managePage = mp
	if v.Touch, err = s.touchHTML(m, "form", rec, edit); err != nil {
		return err
	}
	return render(m.c, fiber.StatusOK, "manage_form.html", v)
}

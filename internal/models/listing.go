package models

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Listing declares what a resource's list answers may be searched,
// filtered and sorted by. The routes, the query validation, the SQL and
// the OpenAPI parameters all come from it, and the schema test checks that
// every filter and sort column has its (tenant_id, column) index.
type Listing struct {
	// Search are the fields q matches: case-insensitively, anywhere in the
	// text (object-list fields such as phones match their stored JSON).
	Search []string
	// Filter are the fields ?<field>=<value> selects by: equality for
	// scalars, "contains the value" for string lists (tags).
	Filter []string
	// Sort are the fields ?sort=<field> (or -<field>, descending) orders
	// by, besides created_at and updated_at.
	Sort []string
}

// List query parameters every listing resource takes besides its filters.
const (
	QuerySearch       = "q"
	QuerySort         = "sort"
	QueryUpdatedSince = "updated_since"
	// MaxSearchLen bounds q.
	MaxSearchLen = 100
)

// pagingParams are read by the route (pageParams), not by ParseListQuery.
var pagingParams = map[string]bool{"limit": true, "offset": true}

// ListQuery is a validated search, filter and sort of one list.
type ListQuery struct {
	Search       string
	Filters      []ListFilter
	UpdatedSince string // stored time format
	Sort         string // a column
	Desc         bool
}

// ListFilter is one ?field=value of a list.
type ListFilter struct {
	Field *Field
	Value any // string, int64 or bool, as the column holds it
}

// SortFields are the values ?sort= accepts (ascending; "-" + each for
// descending).
func (l *Listing) SortFields() []string {
	return append(append([]string{}, l.Sort...), "created_at", "updated_at")
}

// checkListing verifies a resource's listing declaration: every name a
// field of a type its use can query.
func checkListing(r *Resource) error {
	l := r.Listing
	if l == nil {
		return nil
	}
	if r.Scope != TenantScope {
		return fmt.Errorf("resource %q: listings are declared on tenant resources only", r.Name)
	}
	for _, name := range l.Search {
		f := r.byName[name]
		if f == nil || !f.Stored() || f.Secret != NotSecret || (f.Type != String && f.Type != ObjectList && f.Type != StringList) {
			return fmt.Errorf("resource %q: search field %q must be a stored text field", r.Name, name)
		}
	}
	for _, name := range l.Filter {
		f := r.byName[name]
		if f == nil || !f.Stored() || f.Secret != NotSecret || (f.Type != String && f.Type != Int && f.Type != Bool && f.Type != StringList) {
			return fmt.Errorf("resource %q: filter field %q must be a stored string, integer, boolean or string list", r.Name, name)
		}
		if name == QuerySearch || name == QuerySort || name == QueryUpdatedSince || pagingParams[name] {
			return fmt.Errorf("resource %q: filter field %q clashes with a list parameter", r.Name, name)
		}
	}
	for _, name := range l.Sort {
		f := r.byName[name]
		if f == nil || !f.Stored() || f.Secret != NotSecret || (f.Type != String && f.Type != Int && f.Type != Bool) {
			return fmt.Errorf("resource %q: sort field %q must be a stored scalar", r.Name, name)
		}
	}
	return nil
}

// IndexedColumns are the columns a listing filters or sorts by with an
// index on (tenant_id, column): every scalar filter and sort field,
// created_at and updated_at. String-list filters (tags) match inside JSON text and are
// narrowed by the tenant only.
func (l *Listing) IndexedColumns(r *Resource) []string {
	seen := map[string]bool{"created_at": true, "updated_at": true}
	out := []string{"created_at", "updated_at"}
	for _, name := range append(append([]string{}, l.Filter...), l.Sort...) {
		if f := r.Field(name); f != nil && f.Type != StringList && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// ParseListQuery validates a list request's query against the resource's
// listing: q, sort, updated_since and the declared filters. Anything else
// (a filter the resource does not have, a misspelt parameter) is refused,
// so a typo never silently lists everything. Errors are 400s naming the
// parameter.
func ParseListQuery(res *Resource, query url.Values) (ListQuery, error) {
	var q ListQuery
	l := res.Listing
	if l == nil {
		return q, nil
	}
	verr := &ValidationError{}
	filters := map[string]bool{}
	for _, name := range l.Filter {
		filters[name] = true
	}
	names := make([]string, 0, len(query))
	for name := range query {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		vals := query[name]
		if pagingParams[name] {
			continue
		}
		if len(vals) != 1 {
			verr.add(name, "give it once")
			continue
		}
		v := vals[0]
		switch {
		case name == QuerySearch:
			v = strings.TrimSpace(v)
			if n := len([]rune(v)); n > MaxSearchLen || hasControl(v) {
				verr.add(name, "must be at most %d characters of text", MaxSearchLen)
				continue
			}
			q.Search = v
		case name == QuerySort:
			col, desc := strings.CutPrefix(v, "-")
			if !contains(l.SortFields(), col) {
				verr.add(name, "must be one of %s, each optionally prefixed with - for descending order", strings.Join(l.SortFields(), ", "))
				continue
			}
			q.Sort, q.Desc = col, desc
		case name == QueryUpdatedSince:
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				verr.add(name, "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
				continue
			}
			q.UpdatedSince = FormatTime(t)
		case filters[name]:
			val, err := filterValue(res.Field(name), v)
			if err != nil {
				verr.add(name, "%s", err.Error())
				continue
			}
			q.Filters = append(q.Filters, ListFilter{Field: res.Field(name), Value: val})
		default:
			verr.add(name, "unknown list parameter; %s lists take limit, offset, q, sort, updated_since and the filters %s", res.Name, strings.Join(l.Filter, ", "))
		}
	}
	return q, verr.orNil()
}

// filterValue checks a filter's text against its field the way a write
// would check the value.
func filterValue(f *Field, v string) (any, error) {
	switch f.Type {
	case Int:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || (f.HasRange && (n < f.Min || n > f.Max)) || (!f.HasRange && f.Ref != "" && n < 1) {
			return nil, fmt.Errorf("must be an integer%s", rangeText(f))
		}
		return n, nil
	case Bool:
		b, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return nil, fmt.Errorf("must be true or false")
		}
		return b, nil
	}
	// Strings and string lists: the value (one list item) as a write checks it.
	if v == "" || hasControl(v) || len([]rune(v)) > maxLenOf(f) {
		return nil, fmt.Errorf("must be 1 to %d characters of text", maxLenOf(f))
	}
	if len(f.Enum) > 0 && !contains(f.Enum, v) {
		return nil, fmt.Errorf("must be one of %s", strings.Join(f.Enum, ", "))
	}
	if f.re != nil && !f.re.MatchString(v) {
		return nil, fmt.Errorf("must match %s", f.Pattern)
	}
	return v, nil
}

func rangeText(f *Field) string {
	if f.HasRange {
		return fmt.Sprintf(" from %d to %d", f.Min, f.Max)
	}
	if f.Ref != "" {
		return " (an id)"
	}
	return ""
}

func maxLenOf(f *Field) int {
	if f.MaxLen > 0 {
		return f.MaxLen
	}
	return DefaultMaxLen
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// likeEscape makes s match literally inside a LIKE pattern with ESCAPE '!'
// (one escape character both dialects accept).
func likeEscape(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}

// where adds the query's conditions to a list's WHERE clause.
func (q ListQuery) where(res *Resource, where string, args []any) (string, []any) {
	if q.Search != "" && res.Listing != nil {
		var ors []string
		pattern := "%" + likeEscape(q.Search) + "%"
		for _, name := range res.Listing.Search {
			ors = append(ors, name+" LIKE ? ESCAPE '!'")
			args = append(args, pattern)
		}
		where += " AND (" + strings.Join(ors, " OR ") + ")"
	}
	for _, f := range q.Filters {
		switch f.Field.Type {
		case StringList:
			// A JSON array of strings holds the item as "item" (the values
			// a filter accepts need no JSON escaping: they match the
			// field's pattern, which CRM tags keep to plain characters).
			where += " AND " + f.Field.Name + " LIKE ? ESCAPE '!'"
			args = append(args, "%"+likeEscape(`"`+f.Value.(string)+`"`)+"%")
		case Bool:
			where += " AND " + f.Field.Name + " = ?"
			args = append(args, boolArg(f.Value.(bool)))
		default:
			where += " AND " + f.Field.Name + " = ?"
			args = append(args, f.Value)
		}
	}
	if q.UpdatedSince != "" {
		where += " AND updated_at >= ?"
		args = append(args, q.UpdatedSince)
	}
	return where, args
}

// boolArg is a boolean as both dialects store it (0 or 1).
func boolArg(b bool) int {
	if b {
		return 1
	}
	return 0
}

// order is the ORDER BY of a list: the requested sort, then the
// resource's stable order.
func (q ListQuery) order(res *Resource, stable string) string {
	if q.Sort == "" {
		return stable
	}
	dir := " ASC"
	if q.Desc {
		dir = " DESC"
	}
	tie := "id"
	if !res.HasID() {
		tie = res.KeyField()
	}
	if q.Sort == tie {
		return q.Sort + dir
	}
	return q.Sort + dir + ", " + tie + dir
}

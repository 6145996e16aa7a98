package routes

import (
	"strings"

	"github.com/switchboard/switchboard/internal/models"
)

// The list parameters of resources with a Listing (models/listing.go):
// the route, its summary and each parameter's OpenAPI schema come from
// the declaration, as the query validation and the SQL do.

// listParams are the query parameters a generated list route takes.
func listParams(res *models.Resource) []string {
	params := []string{"limit", "offset"}
	if l := res.Listing; l != nil {
		params = append(params, models.QuerySearch, models.QuerySort, models.QueryUpdatedSince)
		params = append(params, l.Filter...)
	}
	return params
}

// listSummary says what a list route searches, filters and sorts by.
func listSummary(res *models.Resource) string {
	l := res.Listing
	if l == nil {
		return "List " + res.Name
	}
	return "List " + res.Name + ": q searches " + strings.Join(l.Search, ", ") +
		"; filters " + strings.Join(l.Filter, ", ") + ", updated_since; sort by " +
		strings.Join(l.SortFields(), ", ") + " (-field descending); an unknown parameter or bad value is a 400"
}

// listParamSchema is the schema of one of a listing's parameters; ok is
// false for parameters a listing does not declare.
func listParamSchema(res *models.Resource, name string) (obj, bool) {
	l := res.Listing
	if l == nil {
		return nil, false
	}
	switch name {
	case models.QuerySearch:
		return obj{"type": "string", "maxLength": models.MaxSearchLen,
			"description": "case-insensitive text anywhere in " + strings.Join(l.Search, ", ")}, true
	case models.QuerySort:
		var values []string
		for _, f := range l.SortFields() {
			values = append(values, f, "-"+f)
		}
		return obj{"type": "string", "enum": values, "description": "field to order by; a leading - orders descending"}, true
	case models.QueryUpdatedSince:
		return obj{"type": "string", "format": "date-time", "description": "only objects changed at or after this time"}, true
	}
	for _, fname := range l.Filter {
		if fname != name {
			continue
		}
		f := res.Field(name)
		if f.Type == models.StringList {
			// One item: objects whose list holds it.
			item := valueSchema(&models.Field{Name: f.Name, Type: models.String, Pattern: f.Pattern, MaxLen: f.MaxLen, Enum: f.Enum}, false, request)
			item["description"] = "objects whose " + f.Name + " include this value"
			return item, true
		}
		s := valueSchema(f, false, request)
		delete(s, "default")
		delete(s, "readOnly")
		s["description"] = "objects whose " + f.Name + " equals this value"
		return s, true
	}
	return nil, false
}

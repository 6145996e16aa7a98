package models

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// duplicateOf rewrites a unique violation of res's table in the words of
// the API: which declared unique key (Resource.Unique) clashed, named by
// its fields and the values rec gave them ("an extension named 1001
// already exists"), never the table's columns or index names. Other
// errors are returned as they are.
func duplicateOf(res *Resource, rec Record, err error) error {
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.key == nil {
		return err
	}
	if res.Singleton && res.Scope == TenantScope && slices.Equal(ce.key, []string{"tenant_id"}) {
		return &ConflictError{Msg: "the tenant already has its " + res.Title}
	}
	key := matchUnique(res, ce.key)
	if key == nil {
		return &ConflictError{Msg: fmt.Sprintf("%s %s with the same unique values already exists", article(res.Title), res.Title)}
	}
	fields := map[string]string{}
	var said []string
	for _, f := range key {
		fields[f] = "already used by another " + res.Title
		said = append(said, fmt.Sprintf("%s %v", f, rec[f]))
	}
	what := "with " + strings.Join(said, " and ")
	if len(key) == 1 && (key[0] == "name" || key[0] == res.Key) {
		what = fmt.Sprintf("named %v", rec[key[0]])
	}
	return &ConflictError{Msg: fmt.Sprintf("%s %s %s already exists", article(res.Title), res.Title, what), Fields: fields}
}

// matchUnique finds the declared unique key the driver named: by its
// columns (SQLite) or by the index name the DDL gave it (MySQL).
func matchUnique(res *Resource, named []string) []string {
	for i, cols := range uniqueKeys(res) {
		u := res.Unique[i]
		if slices.Equal(named, cols) || slices.Equal(named, []string{uniqueIndexName(res, u)}) {
			return u
		}
	}
	return nil
}

// uniqueIndexName is the MySQL index of a unique key (ddl.go).
func uniqueIndexName(res *Resource, u []string) string {
	return "uq_" + res.Table + "_" + strings.Join(u, "_")
}

// article is "an" before a vowel ("an extension", "an IVR menu"), else "a".
func article(title string) string {
	if title != "" && strings.ContainsRune("aeiouAEIOU", rune(title[0])) {
		return "an"
	}
	return "a"
}

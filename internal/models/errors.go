package models

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel errors the HTTP layer maps to status codes.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("already exists")
	// ErrReferenced means the object is still used by another one.
	ErrReferenced = errors.New("still referenced")
	// ErrUnavailable means the database could not be reached (refused or
	// lost connections, a server shutting down): nothing was changed by
	// the failed statement's own doing, and trying again later may work.
	ErrUnavailable = errors.New("database unavailable")
)

// unavailableError is a connection failure: errors.Is finds ErrUnavailable
// and the driver's error (kept for the logs and for errors.As).
type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return "database unavailable: " + e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// ConflictError names what a create or update collided with.
type ConflictError struct {
	Msg string
	// Fields names the API fields that clashed, each with the reason, when
	// the clash is one of a resource's declared unique keys.
	Fields map[string]string
	// key is what the driver named of the violated unique key (its
	// columns, or its index name): duplicateOf maps it to the resource's
	// declaration, and it never reaches a client.
	key []string
}

func (e *ConflictError) Error() string { return e.Msg }

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// RefusedError is a well-formed write that the current state of another
// object does not allow (a tenant setting, for example); the HTTP layer
// answers 422 with Code.
type RefusedError struct{ Code, Msg string }

func (e *RefusedError) Error() string { return e.Msg }

// ValidationError lists each bad field with the reason.
type ValidationError struct {
	Fields map[string]string
}

func (e *ValidationError) Error() string {
	names := make([]string, 0, len(e.Fields))
	for n := range e.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ": " + e.Fields[n]
	}
	return "invalid input: " + strings.Join(parts, "; ")
}

// add records a problem with field (the first one wins).
func (e *ValidationError) add(field, format string, args ...any) {
	if e.Fields == nil {
		e.Fields = map[string]string{}
	}
	if _, ok := e.Fields[field]; !ok {
		e.Fields[field] = fmt.Sprintf(format, args...)
	}
}

// orNil returns e when it holds problems.
func (e *ValidationError) orNil() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}

// FieldError builds a ValidationError for one field.
func FieldError(field, format string, args ...any) *ValidationError {
	e := &ValidationError{}
	e.add(field, format, args...)
	return e
}

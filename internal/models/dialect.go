package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Dialect holds the few things MySQL and SQLite do differently, chosen once
// when the store opens instead of scattered if-statements.
type Dialect struct {
	Name   string
	SQLite bool
}

var (
	mysqlDialect  = Dialect{Name: "mysql"}
	sqliteDialect = Dialect{Name: "sqlite", SQLite: true}
)

// translate maps driver errors to the package's sentinels (dberr in the
// style guide): unique violations become ErrConflict, foreign-key
// violations ErrReferenced or a validation error. Driver text never leaves.
// Other errors are returned as they are.
func (d Dialect) translate(err error) error {
	if t, ok := d.translateKnown(err); ok {
		return t
	}
	return err
}

// translateKnown is translate, reporting whether err was one it maps.
func (d Dialect) translateKnown(err error) (error, bool) {
	if err == nil {
		return nil, false
	}
	if errors.Is(err, errNoRows) {
		return ErrNotFound, true
	}
	if connectionLost(err) {
		return &unavailableError{err: err}, true
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1062:
			return duplicateError(me.Message), true
		case 1451:
			return fmt.Errorf("%w: other objects use it", ErrReferenced), true
		case 1452:
			return FieldError("reference", "refers to an object that does not exist"), true
		}
		return err, false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return duplicateError(se.Error()), true
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: a reference does not resolve or other objects use it", ErrReferenced), true
		}
	}
	return err, false
}

// duplicateError is a unique violation before the resource is known: the
// key the driver named is kept for duplicateOf, and the message names no
// column (a write that is not a resource's still says what failed).
func duplicateError(msg string) *ConflictError {
	return &ConflictError{Msg: "an object with the same unique values already exists", key: duplicateKey(msg)}
}

// duplicateKey pulls the violated key out of a driver's duplicate message:
// MySQL's "Duplicate entry 'x' for key 'extensions.uq_extensions_name'"
// gives its index name ["uq_extensions_name"], SQLite's "UNIQUE constraint
// failed: extensions.tenant_id, extensions.name (2067)" its columns
// ["tenant_id", "name"].
func duplicateKey(msg string) []string {
	var cols string
	if i := strings.LastIndex(msg, "key '"); i >= 0 {
		cols = strings.TrimSuffix(msg[i+5:], "'")
	} else if i := strings.LastIndex(msg, "failed: "); i >= 0 {
		cols = msg[i+8:]
		if j := strings.Index(cols, " ("); j >= 0 {
			cols = cols[:j]
		}
	}
	var names []string
	for _, c := range strings.Split(cols, ",") {
		c = strings.TrimSpace(c)
		if j := strings.LastIndex(c, "."); j >= 0 {
			c = c[j+1:]
		}
		if c != "" && strings.Trim(c, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == "" {
			names = append(names, c)
		}
	}
	return names
}

// autoID is the primary key column declaration.
func (d Dialect) autoID() string {
	if d.SQLite {
		return "id INTEGER PRIMARY KEY AUTOINCREMENT"
	}
	return "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY"
}

// insertIgnore starts an insert that skips rows whose key exists.
func (d Dialect) insertIgnore() string {
	if d.SQLite {
		return "INSERT OR IGNORE"
	}
	return "INSERT IGNORE"
}

// DialectNamed returns the dialect called name ("mysql" or "sqlite").
func DialectNamed(name string) Dialect {
	if name == "sqlite" {
		return sqliteDialect
	}
	return mysqlDialect
}

// forUpdate is the suffix that locks the rows a SELECT reads until commit
// (SQLite's immediate transactions already hold the one write lock).
func (d Dialect) forUpdate() string {
	if d.SQLite {
		return ""
	}
	return " FOR UPDATE"
}

// nowMillis is an SQL expression for the database's clock in Unix milliseconds.
func (d Dialect) nowMillis() string {
	if d.SQLite {
		return "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
	}
	return "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"
}

// InsertIgnore starts an insert that skips rows whose unique key exists.
func (d Dialect) InsertIgnore() string { return d.insertIgnore() }

// connectionLost reports whether err says the database server could not be
// reached or went away (rather than refusing a statement): refused or
// reset connections, a connection the driver found broken, the server
// shutting down or out of connections. A context that ended is not one.
func connectionLost(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnavailable) {
		return false
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1040, 1053, 1077, 1927: // too many connections, shutdown in progress, normal shutdown, connection killed
			return true
		}
		return false
	}
	var ne net.Error
	var oe *net.OpError
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &oe) || errors.As(err, &ne)
}

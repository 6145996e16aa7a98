package models

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MySQL/MariaDB errors after which the whole transaction can simply run
// again: a deadlock victim (1213, also how Galera reports a certification
// failure, i.e. a conflicting write committed on another node first), a
// lock wait timeout (1205), and a Galera node not ready for commands
// (1047, while it rejoins the cluster).
var retryableMySQL = map[uint16]bool{1213: true, 1205: true, 1047: true}

// txAttempts bounds how often one transaction is tried.
const txAttempts = 4

// retryable reports whether err is a transient conflict worth a retry.
func retryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && retryableMySQL[me.Number]
}

// withRetry runs fn until it succeeds, fails for another reason, or has
// been tried txAttempts times, sleeping a short random backoff between
// attempts so two conflicting writers do not collide again in lockstep.
func withRetry(ctx context.Context, fn func() error) error {
	var err error
	for attempt := 1; ; attempt++ {
		if err = fn(); err == nil || !retryable(err) || attempt == txAttempts {
			return err
		}
		backoff := time.Duration(attempt*10+rand.IntN(20)) * time.Millisecond
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
	}
}

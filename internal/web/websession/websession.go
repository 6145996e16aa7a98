// Package websession keeps administrators' browser sessions in Redis: a
// random id in a cookie, the record under a hash of that id (a copy of
// Redis holds no usable cookie), idle and absolute expiry checked against
// the stored times (not only Redis TTLs), a synchronizer CSRF token, and an
// index per administrator so every session of one can be revoked at once.
package websession

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/platform/keyprefix"
)

// ErrNoSession is a missing, expired or revoked session.
var ErrNoSession = errors.New("no such session")

// sessionsTag follows the installation's key prefix in every session key.
// One hash tag puts a session and its administrator's index in one Redis
// Cluster slot, so they change in one transaction (sessions are
// administrators' browsers: few).
const sessionsTag = "{websession}:"

// Session is one administrator's signed-in browser.
type Session struct {
	// AdminID is the administrator; its role and tenants are read from the
	// database on every request, so the session never carries stale rights.
	AdminID int64
	// Password is Fingerprint of the password hash at sign-in: a session
	// outlives no password change.
	Password string
	// CSRF is the synchronizer token unsafe requests must echo.
	CSRF    string
	Created time.Time
	Seen    time.Time
	// key is the Redis key of the record.
	key string
}

// Store creates, reads and revokes sessions.
type Store struct {
	rdb redis.UniversalClient
	// prefix starts every key: the installation's, so a session of one
	// installation is no session at another sharing the Redis.
	prefix string
	// Idle ends a session unused this long; Absolute ends it this long
	// after sign-in whatever its use.
	Idle, Absolute time.Duration
	// Now is the clock (tests may replace it).
	Now func() time.Time
}

// New returns a store over rdb whose keys start with keyPrefix (the
// installation's, models.Store.KeyPrefix; "" means "sb:").
func New(rdb redis.UniversalClient, keyPrefix string, idle, absolute time.Duration) *Store {
	return &Store{rdb: rdb, prefix: keyprefix.OrDefault(keyPrefix) + sessionsTag, Idle: idle, Absolute: absolute, Now: time.Now}
}

// Fingerprint names a password hash without revealing it.
func Fingerprint(passwordHash string) string {
	sum := sha256.Sum256([]byte("websession\x00" + passwordHash))
	return hex.EncodeToString(sum[:16])
}

func (s *Store) recordKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return s.prefix + hex.EncodeToString(sum[:])
}

func (s *Store) adminKey(adminID int64) string {
	return s.prefix + "admin:" + strconv.FormatInt(adminID, 10)
}

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Create starts a session for an administrator and returns its id (the
// cookie value, which only the browser keeps) and the session.
func (s *Store) Create(ctx context.Context, adminID int64, passwordFingerprint string) (string, *Session, error) {
	id, err := randomToken()
	if err != nil {
		return "", nil, err
	}
	csrf, err := randomToken()
	if err != nil {
		return "", nil, err
	}
	now := s.Now()
	sess := &Session{AdminID: adminID, Password: passwordFingerprint, CSRF: csrf, Created: now, Seen: now, key: s.recordKey(id)}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, sess.key, "admin", adminID, "pw", passwordFingerprint, "csrf", csrf,
			"created", now.UnixMilli(), "seen", now.UnixMilli())
		p.PExpire(ctx, sess.key, s.ttl(sess, now))
		p.SAdd(ctx, s.adminKey(adminID), sess.key)
		p.PExpire(ctx, s.adminKey(adminID), s.Absolute)
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("store session: %w", err)
	}
	return id, sess, nil
}

// ttl is how long Redis keeps a record: until the earlier of its idle and
// absolute ends.
func (s *Store) ttl(sess *Session, now time.Time) time.Duration {
	return max(min(s.Idle, sess.Created.Add(s.Absolute).Sub(now)), time.Millisecond)
}

// Get returns the live session with this id and marks it used; ErrNoSession
// when there is none or it has expired (an expired one is removed).
func (s *Store) Get(ctx context.Context, id string) (*Session, error) {
	if id == "" || len(id) > 100 {
		return nil, ErrNoSession
	}
	key := s.recordKey(id)
	sess, err := s.load(ctx, key)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	if now.Sub(sess.Seen) >= s.Idle || now.Sub(sess.Created) >= s.Absolute {
		s.drop(ctx, sess)
		return nil, ErrNoSession
	}
	// Marking use costs a write; a tenth of the idle time (at most a
	// minute) of imprecision saves one on most requests.
	if now.Sub(sess.Seen) >= min(s.Idle/10, time.Minute) {
		sess.Seen = now
		_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, key, "seen", now.UnixMilli())
			p.PExpire(ctx, key, s.ttl(sess, now))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("touch session: %w", err)
		}
	}
	return sess, nil
}

// Alive reports whether a session read earlier is still live (ErrNoSession
// when it was ended or has expired) without marking it used: a page that
// only watches (an event stream) does not keep its session from idling.
func (s *Store) Alive(ctx context.Context, sess *Session) error {
	cur, err := s.load(ctx, sess.key)
	if err != nil {
		return err
	}
	now := s.Now()
	if now.Sub(cur.Seen) >= s.Idle || now.Sub(cur.Created) >= s.Absolute || cur.Password != sess.Password {
		return ErrNoSession
	}
	return nil
}

func (s *Store) load(ctx context.Context, key string) (*Session, error) {
	m, err := s.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	admin, err1 := strconv.ParseInt(m["admin"], 10, 64)
	created, err2 := strconv.ParseInt(m["created"], 10, 64)
	seen, err3 := strconv.ParseInt(m["seen"], 10, 64)
	if len(m) == 0 || errors.Join(err1, err2, err3) != nil || m["csrf"] == "" {
		return nil, ErrNoSession
	}
	return &Session{AdminID: admin, Password: m["pw"], CSRF: m["csrf"],
		Created: time.UnixMilli(created), Seen: time.UnixMilli(seen), key: key}, nil
}

// Delete ends the session with this id (logout, rotation at sign-in).
func (s *Store) Delete(ctx context.Context, id string) error {
	sess, err := s.load(ctx, s.recordKey(id))
	if errors.Is(err, ErrNoSession) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.drop(ctx, sess)
}

// End ends a session already read.
func (s *Store) End(ctx context.Context, sess *Session) error { return s.drop(ctx, sess) }

func (s *Store) drop(ctx context.Context, sess *Session) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, sess.key)
		p.SRem(ctx, s.adminKey(sess.AdminID), sess.key)
		return nil
	})
	if err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// RevokeAdmin ends the administrator's sessions for which keep (nil: none)
// returns false, and reports how many it ended.
func (s *Store) RevokeAdmin(ctx context.Context, adminID int64, keep func(*Session) bool) (int, error) {
	keys, err := s.rdb.SMembers(ctx, s.adminKey(adminID)).Result()
	if err != nil {
		return 0, fmt.Errorf("list sessions of administrator %d: %w", adminID, err)
	}
	n := 0
	for _, key := range keys {
		sess, err := s.load(ctx, key)
		switch {
		case errors.Is(err, ErrNoSession):
			// Expired in Redis: only the index entry is left.
			sess = &Session{AdminID: adminID, key: key}
		case err != nil:
			return n, err
		case keep != nil && keep(sess):
			continue
		default:
			n++
		}
		if err := s.drop(ctx, sess); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Count is the number of live sessions an administrator holds in Redis
// (expired records Redis has not removed yet included).
func (s *Store) Count(ctx context.Context, adminID int64) (int64, error) {
	n, err := s.rdb.SCard(ctx, s.adminKey(adminID)).Result()
	if err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}

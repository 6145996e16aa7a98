package routes_test

import (
	"bufio"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// streamEnd reads the stream in the background and reports when it ends:
// its connection closes, or it says the session ended.
func streamEnd(rd *bufio.Reader) <-chan time.Time {
	done := make(chan time.Time, 1)
	go func() {
		for {
			line, err := rd.ReadString('\n')
			if err != nil || strings.HasPrefix(line, "event: session.ended") {
				done <- time.Now()
				return
			}
		}
	}()
	return done
}

// An event stream opened with a browser session ends within a second of
// the session's end: sign-out, revocation (a password change) and idle
// expiry alike; before, it kept delivering live calls (callers' numbers)
// to a signed-out browser for good (issue 26, item 7).
func TestSessionEventStreamEndsWithTheSession(t *testing.T) {
	t.Parallel()
	const idle = 3 * time.Second
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			fs := startFake(t)
			s := apptest.Start(t, be, map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr(), "SWITCHBOARD_SESSION_IDLE": idle.String()})
			e := setupCallEnv(t, s, fs)
			waitEvents(t, fs, 1)
			name := createAdmin(t, s, "platform_admin", nil)
			id := adminID(t, s, name)
			password := adminPassword

			// live opens a session's stream and sees a call on it.
			live := func(t *testing.T) (webSession, <-chan time.Time) {
				w := signIn(t, s, name, password)
				rd, _ := openStream(t, e, "", "Cookie", w.cookie()["Cookie"], "Sec-Fetch-Mode", "cors")
				uuid := e.createTenantChannel(t, "1001")
				// A platform administrator's stream carries every tenant's
				// calls, the parallel tests' too: read on to this one, for
				// a time rather than a number of events (a test beside it
				// makes a backlog of hundreds: 200 events were too few).
				for start := time.Now(); ; {
					_, event, data := readMessage(t, rd)
					if event == "channel.created" && strings.Contains(data, uuid) {
						break
					}
					if time.Since(start) > 30*time.Second {
						t.Fatalf("the session's stream never showed the new call (last %s %s)", event, data)
					}
				}
				return w, streamEnd(rd)
			}
			ends := func(t *testing.T, ended <-chan time.Time, from time.Time, within time.Duration) {
				t.Helper()
				select {
				case at := <-ended:
					if took := at.Sub(from); took > within {
						t.Errorf("the stream ended %v after the session, want within %v", took, within)
					}
				case <-time.After(within + 10*time.Second):
					t.Fatal("the stream outlived the session")
				}
			}

			t.Run("sign-out", func(t *testing.T) {
				w, ended := live(t)
				from := time.Now()
				s.DoHeaders(t, "POST", "/logout", formHeaders(w.cookie()), "csrf_token="+url.QueryEscape(w.csrf)).Expect(t, 303)
				ends(t, ended, from, 1500*time.Millisecond)
			})
			t.Run("revoked", func(t *testing.T) {
				_, ended := live(t)
				from := time.Now()
				password = "another long password"
				s.Do(t, "PUT", "/api/administrators/"+id, s.Key, map[string]any{"password": password}).Expect(t, 200)
				ends(t, ended, from, 1500*time.Millisecond)
			})
			t.Run("expired", func(t *testing.T) {
				_, ended := live(t)
				// Watching is no use of the session: it ends idle (the
				// stream's open marked it used a moment ago).
				ends(t, ended, time.Now(), idle+1500*time.Millisecond)
			})
		})
	}
}

package docs_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/comms/chat/chattest"
	"github.com/switchboard/switchboard/internal/media/mediatest"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestManualExamplesRun runs the curl examples of the README and of every
// page of the manual, in reading order, against a fresh server on a fresh
// SQLite database, as a reader following along on a new installation
// would: each must be answered with the status the manual shows after it
// ("# → 202 …") or, where it shows none, a 2xx. Requests are sent as curl
// would send them (`-d` is a form body unless a Content-Type is given),
// and every exchange is checked against the OpenAPI document. Seen
// (issue 27): the README's WhatsApp example was refused as written.
//
// Left out: event streams (-N), which do not end (the calls tests read
// the stream), and shell variables the manual does not set. $URL is the
// url the example before answered (an incoming webhook's).
func TestManualExamplesRun(t *testing.T) {
	// A fresh database whatever the pass runs on, so ids are the ones the
	// manual shows; the chat examples need the chat server.
	env := apptest.Env{Name: "sqlite", DB: storetest.SQLite(t)}
	x := chattest.Start(t, "localhost")
	s := apptest.Start(t, env, map[string]string{
		"SWITCHBOARD_BASE_URL":     "http://localhost:8080",
		"SWITCHBOARD_CHAT_API_URL": x.APIURL,
		"SWITCHBOARD_CHAT_DOMAIN":  x.Domain,
		"SWITCHBOARD_CHAT_WS_URL":  x.WSURL,
		// What messaging.md tells the operator to allow for its Kannel.
		"SWITCHBOARD_EGRESS_ALLOWED_HOSTS": "kannel",
	})
	vars := map[string]string{"KEY": s.Key, "T": "acme"}
	var totpSecret string // from an enrolment's answer: the reader's authenticator app
	wav := mediatest.Tone(t, "upload.wav", 1)
	audio := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "example.wav", 1))

	files := []string{"../README.md"}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, pages...)
	ran := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range shellExamples(string(raw)) {
			where := fmt.Sprintf("%s:%d", filepath.Base(file), ex.line)
			words := ex.words(vars, audio)
			switch {
			case len(words) >= 4 && strings.HasSuffix(words[0], "=") && words[1] == "go" && strings.Contains(strings.Join(words, " "), "key create"):
				// KEY=$(go run ./cmd/switchboard key create …): the server's key.
				continue
			case len(words) > 2 && words[0] == "go" && slicesContains(words, "admin") && slicesContains(words, "create"):
				user, pass := flagValue(words, "--username"), flagValue(words, "--password")
				if _, err := s.Store.SetAdmin(context.Background(), user, pass); err != nil {
					t.Fatalf("%s: admin create: %v", where, err)
				}
				continue
			case len(words) == 0 || words[0] != "curl":
				continue
			}
			req, skip := curlRequest(t, s.URL, words, wav)
			if skip != "" {
				t.Logf("%s: not run: %s", where, skip)
				continue
			}
			if req.Header.Get("X-TOTP") != "" && totpSecret != "" {
				code, err := totp.GenerateCode(totpSecret, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("X-TOTP", code) // the code the reader's app shows now
			}
			r := s.Send(t, req)
			ran++
			var answer struct {
				Secret     string `json:"secret"`
				OTPAuthURL string `json:"otpauth_url"`
			}
			if json.Unmarshal(r.Body, &answer) == nil && answer.Secret != "" && answer.OTPAuthURL != "" {
				totpSecret = answer.Secret
			}
			// $URL is what the page tells the reader to take from the answer
			// before (an incoming webhook's url, shown once).
			var made struct {
				URL string `json:"url"`
			}
			if json.Unmarshal(r.Body, &made) == nil && strings.HasPrefix(made.URL, "http://localhost:8080/") {
				vars["URL"] = made.URL
			}
			want := ex.status
			ok := r.Status == want || (want == 0 && r.Status >= 200 && r.Status < 300)
			if !ok {
				t.Errorf("%s: %s %s answered %d (the manual shows %s): %.300s", where, req.Method, req.URL.RequestURI(), r.Status, shown(want), r.Body)
			}
		}
	}
	if ran < 30 {
		t.Fatalf("only %d examples ran: the parser lost them", ran)
	}
}

func shown(status int) string {
	if status == 0 {
		return "no status, so a 2xx"
	}
	return strconv.Itoa(status)
}

func slicesContains(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

func flagValue(words []string, name string) string {
	for i, w := range words {
		if w == name && i+1 < len(words) {
			return words[i+1]
		}
	}
	return ""
}

// example is one shell command of a ```sh block, its words still holding
// their quoting, and the status the manual shows after it.
type example struct {
	line   int
	tokens []token
	status int
}

// token is a shell word as written: parts with their quoting, so variables
// expand where the shell would expand them.
type token []part

type part struct {
	text   string
	single bool // '…': literal
}

var arrowStatus = regexp.MustCompile(`^#\s*→\s*(\d{3})\b`)

// shellExamples splits the ```sh blocks of a Markdown page into commands
// (a small shell lexer: quotes may span lines, a backslash continues one,
// # starts a comment between words).
func shellExamples(md string) []example {
	var out []example
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```sh" {
			continue
		}
		start := i + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		out = append(out, lexBlock(lines[start:end], start+1)...)
		i = end
	}
	return out
}

func lexBlock(lines []string, firstLine int) []example {
	src := strings.Join(lines, "\n") + "\n"
	var (
		out  []example
		cur  example
		tok  token
		buf  strings.Builder
		line = firstLine
		in   byte // quote we are in
		word bool
	)
	flushPart := func(single bool) {
		if buf.Len() > 0 || single {
			tok = append(tok, part{text: buf.String(), single: single})
			buf.Reset()
		}
	}
	endWord := func() {
		flushPart(false)
		if word {
			cur.tokens = append(cur.tokens, tok)
		}
		tok, word = nil, false
	}
	endCommand := func() {
		endWord()
		if len(cur.tokens) > 0 {
			out = append(out, cur)
		}
		cur = example{}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if cur.line == 0 && c != ' ' && c != '\n' && c != '#' {
			cur.line = line
		}
		switch {
		case in == '\'':
			if c == '\'' {
				flushPart(true)
				in = 0
			} else {
				buf.WriteByte(c)
			}
		case in == '"':
			switch {
			case c == '"':
				flushPart(false)
				in = 0
			case c == '\\' && i+1 < len(src) && strings.IndexByte(`"\$`, src[i+1]) >= 0:
				i++
				buf.WriteByte(src[i])
			default:
				buf.WriteByte(c)
			}
		case c == '\'':
			flushPart(false)
			in, word = '\'', true
		case c == '"':
			flushPart(false)
			in, word = '"', true
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i++
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n':
			endCommand()
			// A "# → 201 …" line right after a command shows its answer.
			rest := src[i+1:]
			if nl := strings.IndexByte(rest, '\n'); nl >= 0 && len(out) > 0 && out[len(out)-1].status == 0 {
				if m := arrowStatus.FindStringSubmatch(strings.TrimSpace(rest[:nl])); m != nil {
					out[len(out)-1].status, _ = strconv.Atoi(m[1])
				}
			}
		case c == '#' && !word:
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
		case c == '$' && i+1 < len(src) && src[i+1] == '(':
			// $(…) as one unit, expanded later.
			depth, j := 0, i+1
			for ; j < len(src); j++ {
				if src[j] == '(' {
					depth++
				} else if src[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			buf.WriteString(src[i : j+1])
			word, i = true, j
		default:
			buf.WriteByte(c)
			word = true
		}
		if c == '\n' {
			line++
		}
	}
	endCommand()
	return out
}

var shellVar = regexp.MustCompile(`\$\(base64 -w0 [^)]*\)|\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// words expands the command's variables as the shell would (not inside
// single quotes): the manual's $KEY and $T, and $(base64 -w0 file) as a
// short tone. An unknown variable stays as written, and the command is
// then not run.
func (e example) words(vars map[string]string, audio string) []string {
	out := make([]string, 0, len(e.tokens))
	for _, tok := range e.tokens {
		var b strings.Builder
		for _, p := range tok {
			if p.single {
				b.WriteString(p.text)
				continue
			}
			b.WriteString(shellVar.ReplaceAllStringFunc(p.text, func(m string) string {
				if strings.HasPrefix(m, "$(base64") {
					return audio
				}
				name := shellVar.FindStringSubmatch(m)[1]
				if v, ok := vars[name]; ok {
					return v
				}
				return m
			}))
		}
		out = append(out, b.String())
	}
	return out
}

// curlRequest builds the request curl would send for words, aimed at
// base instead of localhost:8080; skip says why a command is not run.
func curlRequest(t *testing.T, base string, words []string, upload []byte) (*http.Request, string) {
	t.Helper()
	var (
		method, target, body string
		form, hasBody        bool
		header               = http.Header{}
		user                 *url.Userinfo
		parts                [][2]string // -F name=value; a value @file is a file
	)
	for i := 1; i < len(words); i++ {
		w := words[i]
		arg := func() string {
			i++
			if i < len(words) {
				return words[i]
			}
			return ""
		}
		switch {
		case w == "-X" || w == "--request":
			method = arg()
		case w == "-H" || w == "--header":
			k, v, _ := strings.Cut(arg(), ":")
			header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		case w == "--json":
			body, hasBody = arg(), true
			header.Set("Content-Type", "application/json")
			header.Set("Accept", "application/json")
		case w == "-d" || w == "--data" || w == "--data-raw":
			if hasBody {
				body += "&"
			}
			body += arg()
			hasBody, form = true, true
		case w == "--data-urlencode":
			// name=content: the content is URL-encoded, the name kept.
			name, content, _ := strings.Cut(arg(), "=")
			if hasBody {
				body += "&"
			}
			body += name + "=" + url.QueryEscape(content)
			hasBody, form = true, true
		case w == "-F" || w == "--form":
			name, value, _ := strings.Cut(arg(), "=")
			parts = append(parts, [2]string{name, value})
		case w == "-T":
			return nil, "an upload of a file (-T)"
		case w == "-u" || w == "--user":
			u, p, _ := strings.Cut(arg(), ":")
			user = url.UserPassword(u, p)
		case w == "-o" || w == "--output" || w == "-w":
			arg()
		case w == "-N" || strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "N"):
			return nil, "an event stream (-N): it does not end"
		case strings.HasPrefix(w, "-"):
			// -s, -i, -S, -f, -L: how curl shows the answer.
		default:
			target = w
		}
	}
	if strings.Contains(target, "$") || strings.Contains(body, "$") && !strings.Contains(body, "${") {
		return nil, "a shell variable the manual does not set (" + target + ")"
	}
	u, err := url.Parse(target)
	if err != nil || !strings.HasPrefix(target, "localhost:8080") && !strings.HasPrefix(target, "http://localhost:8080") {
		return nil, "not a request to the local server: " + target
	}
	if !strings.HasPrefix(target, "http") {
		u, _ = url.Parse("http://" + target)
	}
	if method == "" {
		method = "GET"
		if hasBody {
			method = "POST"
		}
	}
	if form && header.Get("Content-Type") == "" {
		header.Set("Content-Type", "application/x-www-form-urlencoded") // curl's default for -d
	}
	if len(parts) > 0 {
		// -F: a multipart form, with a file part for @file (the reader's
		// audio file: a short tone here).
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for _, p := range parts {
			var err error
			if file, ok := strings.CutPrefix(p[1], "@"); ok {
				var fw io.Writer
				if fw, err = mw.CreateFormFile(p[0], filepath.Base(file)); err == nil {
					_, err = fw.Write(upload)
				}
			} else {
				err = mw.WriteField(p[0], p[1])
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := mw.Close(); err != nil {
			t.Fatal(err)
		}
		body, hasBody = buf.String(), true
		header.Set("Content-Type", mw.FormDataContentType())
	}
	var rd *strings.Reader
	if hasBody {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+u.RequestURI(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req, _ = http.NewRequest(method, base+u.RequestURI(), rd)
	}
	req.Header = header
	if user != nil {
		p, _ := user.Password()
		req.SetBasicAuth(user.Username(), p)
	}
	return req, ""
}

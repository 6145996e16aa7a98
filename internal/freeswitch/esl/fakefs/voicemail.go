package fakefs

import (
	"context"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// mod_voicemail's message API as the fake node runs it: vm_inject files a
// message (looking the box up through mod_xml_curl as voicemail_inject
// does, copying the file into the box's storage directory), vm_list lists
// a box, vm_read marks messages heard. The answers are mod_voicemail's:
// "+OK", "Error: <usage>" for a refused vm_inject, "-ERR can't find user
// or profile." for vm_list and vm_read. Not modelled (refused as errors):
// the group= and domain= broadcast forms of vm_inject and a box without a
// domain (the real switch then takes its default domain).

// VMMessage is one message in the fake mod_voicemail's voicemail_msgs.
type VMMessage struct {
	Created   int64
	ReadEpoch int64
	Username  string
	Domain    string
	Folder    string
	Path      string
	UUID      string
	CIDName   string
	CIDNumber string
	// Seconds is message_len.
	Seconds   int64
	ReadFlags string
}

// vmInjectUsage is mod_voicemail's VM_INJECT_USAGE.
const vmInjectUsage = "[group=<group>[@domain]|domain=<domain>|<box>[@<domain>]] <sound_file> [<cid_num>] [<cid_name>]"

const vmNoProfile = "-ERR can't find user or profile.\n"

// VoicemailMessages returns the messages filed so far, in filing order.
func (s *Server) VoicemailMessages() []VMMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]VMMessage(nil), s.vm...)
}

// splitBlank splits API arguments as switch_separate_string does with a
// space: runs of spaces separate, a pair of single quotes groups (and is
// removed), a backslash keeps the next character from splitting; at most
// max arguments.
func splitBlank(s string, max int) []string {
	var out []string
	var cur strings.Builder
	quoted, started := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			// The escaped character never splits; \' \" \\ and \n \r \t \s
			// become one character, any other pair stays as written.
			i++
			switch e := s[i]; e {
			case '\'', '"', '\\':
				cur.WriteByte(e)
			case 'n', 'r', 't', 's':
				cur.WriteByte(map[byte]byte{'n': '\n', 'r': '\r', 't': '\t', 's': ' '}[e])
			default:
				cur.WriteByte('\\')
				cur.WriteByte(e)
			}
			started = true
		case c == '\'':
			// Every quote stops or starts the splitting; it is removed
			// only when it closes or another one follows.
			if !quoted && strings.IndexByte(s[i+1:], '\'') < 0 {
				cur.WriteByte(c)
			}
			quoted, started = !quoted, true
		case c == ' ' && !quoted && len(out) < max-1:
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteByte(c)
			started = true
		}
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}

func (s *Server) vmInject(args string) string {
	refused := "Error: " + vmInjectUsage + "\n"
	argv := splitBlank(args, 6)
	if len(argv) < 2 {
		return refused
	}
	box, file := argv[0], argv[1]
	cidNum, cidName, flags := "anonymous", "anonymous", "B"
	if len(argv) > 2 {
		cidNum = argv[2]
	}
	if len(argv) > 3 {
		cidName = argv[3]
	}
	if len(argv) > 5 && argv[5] != "" {
		flags = argv[5]
	}
	user, domain, _ := strings.Cut(box, "@")
	domain, profile, ok := strings.Cut(domain, "@")
	if !ok {
		profile = domain
	}
	if domain == "" || strings.HasPrefix(strings.ToLower(user), "group=") || strings.HasPrefix(strings.ToLower(user), "domain=") {
		return refused
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	prof, err := s.vmProfile(ctx, profile, domain)
	if err != nil || prof == nil {
		return refused
	}
	params, found, err := s.vmLocateUser(ctx, user, domain)
	if err != nil || !found {
		return refused
	}
	dir := params["vm-storage-dir"]
	if dir == "" && prof["storage-dir"] != "" {
		dir = prof["storage-dir"] + "/" + domain + "/" + user
	}
	if !strings.HasPrefix(dir, "/") {
		return refused // the real switch would use its own storage directory
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return refused
	}
	id := uuid.NewString()
	dest := dir + "/msg_" + id + "_broadcast_" + filepath.Base(file)
	if len(dest) >= 250 {
		dest = fmt.Sprintf("%s/msg_%s_broadcast_%d%s", dir, id, time.Now().UnixMicro(), filepath.Ext(file))
	}
	// Like switch_file_copy: a source that cannot be read copies nothing,
	// and then nothing is filed, though the answer is still +OK.
	if err := copyFile(file, dest); err != nil {
		return "+OK\n"
	}
	msg := VMMessage{Created: time.Now().Unix(), Username: user, Domain: domain, Folder: "inbox", Path: dest, UUID: id,
		CIDName: cidName, CIDNumber: cidNum, Seconds: wavSeconds(dest), ReadFlags: flags}
	s.mu.Lock()
	s.vm = append(s.vm, msg)
	s.mwiLocked(user, domain, "NEW")
	s.mu.Unlock()
	return "+OK\n"
}

// mwiLocked fires mod_voicemail's update_mwi event for a box's inbox:
// MESSAGE_WAITING with the new and saved counts (profile default
// send-full-vm-header false: "new/saved"). Caller holds s.mu.
func (s *Server) mwiLocked(user, domain, reason string) {
	var fresh, saved int
	for _, m := range s.vm {
		if m.Username != user || m.Domain != domain || m.Folder != "inbox" {
			continue
		}
		if m.ReadEpoch == 0 {
			fresh++
		} else {
			saved++
		}
	}
	yn := "no"
	if fresh > 0 {
		yn = "yes"
	}
	h := s.stdHeadersLocked("MESSAGE_WAITING")
	h = append(h, Header{"MWI-Messages-Waiting", yn}, Header{"Update-Reason", reason},
		Header{"MWI-Message-Account", user + "@" + domain}, Header{"MWI-Voice-Message", fmt.Sprintf("%d/%d", fresh, saved)})
	s.deliverLocked("MESSAGE_WAITING", h, "")
}

// vmBox parses "<id>@<domain>[/profile] rest..." as vm_list and vm_read do.
func vmBox(args string) (id, domain, profile, rest string, ok bool) {
	head, rest, _ := strings.Cut(args, " ")
	id, domain, ok = strings.Cut(head, "@")
	if !ok || domain == "" {
		return "", "", "", "", false
	}
	domain, profile, _ = strings.Cut(domain, "/")
	return id, domain, firstOf(profile, "default"), rest, true
}

func firstOf(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (s *Server) vmList(args string) string {
	id, domain, profile, _, ok := vmBox(strings.TrimSpace(args))
	if !ok || !s.vmHasProfile(profile) {
		return vmNoProfile
	}
	var b strings.Builder
	for _, m := range s.VoicemailMessages() {
		if m.Username == id && m.Domain == domain {
			fmt.Fprintf(&b, "%d:%d:%s:%s:%s:%s:%s:%s:%s:%d\n", m.Created, m.ReadEpoch, m.Username, m.Domain, m.Folder, m.Path, m.UUID, m.CIDName, m.CIDNumber, m.Seconds)
		}
	}
	return b.String()
}

func (s *Server) vmRead(args string) string {
	id, domain, profile, rest, ok := vmBox(strings.TrimSpace(args))
	mode, uuid, _ := strings.Cut(rest, " ")
	var epoch int64
	switch strings.ToLower(mode) {
	case "read":
		epoch = time.Now().Unix()
	case "unread":
	default:
		ok = false
	}
	if !ok || !s.vmHasProfile(profile) {
		return vmNoProfile
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.vm {
		// With a uuid only that message; without one, the whole domain.
		if (uuid != "" && s.vm[i].UUID == uuid) || (uuid == "" && s.vm[i].Domain == domain) {
			s.vm[i].ReadEpoch = epoch
		}
	}
	s.mwiLocked(id, domain, "READ")
	return "+OK\n"
}

// vmHasProfile: the fake knows the profile if voicemail.conf names it.
func (s *Server) vmHasProfile(name string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := s.vmProfile(ctx, name, "")
	return err == nil && p != nil
}

// vmProfile reads voicemail.conf through mod_xml_curl and returns the
// params of the profile named name, else of one named after the domain,
// else of "default" (voicemail_inject's order); nil when none exists.
func (s *Server) vmProfile(ctx context.Context, name, domain string) (map[string]string, error) {
	body, err := s.postFetch(ctx, s.fetchForm("configuration", "configuration", "name", "voicemail.conf"))
	if err != nil {
		return nil, fmt.Errorf("fakefs voicemail.conf: %w", err)
	}
	var doc struct {
		Sections []struct {
			Configs []struct {
				Name     string `xml:"name,attr"`
				Profiles []struct {
					Name   string    `xml:"name,attr"`
					Params []xmlPair `xml:"param"`
				} `xml:"profiles>profile"`
			} `xml:"configuration"`
		} `xml:"section"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("fakefs voicemail.conf: %w", err)
	}
	for _, want := range []string{name, domain, "default"} {
		for _, sec := range doc.Sections {
			for _, c := range sec.Configs {
				for _, p := range c.Profiles {
					if c.Name == "voicemail.conf" && want != "" && p.Name == want {
						return pairs(p.Params), nil
					}
				}
			}
		}
	}
	return nil, nil
}

// xmlPair is a <param name value/> or <variable name value/>.
type xmlPair struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

func pairs(ps []xmlPair) map[string]string {
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		m[p.Name] = p.Value
	}
	return m
}

// vmLocateUser fetches the domain with the user as voicemail_inject does
// (purpose publish-vm) and returns the user's params merged over the
// domain's and its group's.
func (s *Server) vmLocateUser(ctx context.Context, user, domain string) (map[string]string, bool, error) {
	form := s.fetchForm("directory", "domain", "name", domain)
	form.Set("user", user)
	form.Set("domain", domain)
	form.Set("purpose", "publish-vm")
	body, err := s.postFetch(ctx, form)
	if err != nil {
		return nil, false, fmt.Errorf("fakefs directory: %w", err)
	}
	type userEl struct {
		ID     string    `xml:"id,attr"`
		Params []xmlPair `xml:"params>param"`
	}
	var doc struct {
		Sections []struct {
			Domains []struct {
				Name   string    `xml:"name,attr"`
				Params []xmlPair `xml:"params>param"`
				Users  []userEl  `xml:"users>user"`
				Groups []struct {
					Users []userEl `xml:"users>user"`
				} `xml:"groups>group"`
			} `xml:"domain"`
		} `xml:"section"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, false, fmt.Errorf("fakefs directory: %w", err)
	}
	for _, sec := range doc.Sections {
		for _, d := range sec.Domains {
			if !strings.EqualFold(d.Name, domain) {
				continue
			}
			users := d.Users
			for _, g := range d.Groups {
				users = append(users, g.Users...)
			}
			for _, u := range users {
				if u.ID == user {
					merged := pairs(d.Params)
					for k, v := range pairs(u.Params) {
						merged[k] = v
					}
					return merged, true, nil
				}
			}
		}
	}
	return nil, false, nil
}

// postFetch posts a mod_xml_curl form to the configured URL and returns
// the answer (at most 4 MiB), which must be 200.
func (s *Server) postFetch(ctx context.Context, form url.Values) ([]byte, error) {
	u := s.xmlCurlURL()
	if u == "" {
		return nil, fmt.Errorf("no mod_xml_curl URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "freeswitch-xml/1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d %v", resp.StatusCode, err)
	}
	return body, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	return out.Close()
}

// wavSeconds is a PCM WAV file's length in whole seconds (0 when unknown).
func wavSeconds(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0
	}
	byteRate := int64(binary.LittleEndian.Uint32(b[28:32]))
	if byteRate == 0 {
		return 0
	}
	return int64(len(b)-44) / byteRate
}

package chat

import (
	"bytes"
	"context"
	"fmt"
	"sort"
)

// Bookmark is one room in a user's bookmarks (XEP-0048 storage).
type Bookmark struct {
	Room     string // room local part
	Name     string // shown by clients
	Nick     string
	Autojoin bool
}

// SetBookmarks replaces a user's room bookmarks. ejabberd keeps them in
// private storage and mirrors them to the user's PEP node storage:bookmarks
// (XEP-0411), where web clients such as converse.js read them: with
// autojoin the client enters the user's channels at login.
func (c *Client) SetBookmarks(ctx context.Context, user string, marks []Bookmark) error {
	return c.call(ctx, "private_set", map[string]string{"user": user, "host": c.cfg.Domain, "element": c.bookmarksXML(marks)}, nil)
}

func (c *Client) bookmarksXML(marks []Bookmark) string {
	var b bytes.Buffer
	b.WriteString(`<storage xmlns="storage:bookmarks">`)
	for _, m := range marks {
		fmt.Fprintf(&b, `<conference jid="%s" autojoin="%t" name="`, c.RoomJID(m.Room), m.Autojoin)
		escape(&b, m.Name)
		b.WriteString(`"><nick>`)
		escape(&b, m.Nick)
		b.WriteString("</nick></conference>")
	}
	b.WriteString("</storage>")
	return b.String()
}

// bookmarks brings every chat user's bookmarks of a tenant in line with
// the rooms it is a member of. What was last set per user is remembered,
// so a change touches only the users whose rooms changed (a restart sets
// them all once).
func (s *Sync) bookmarks(ctx context.Context, st *tenantState) error {
	per := map[string][]Bookmark{}
	for _, ext := range st.accounts {
		per[ext] = nil
	}
	for _, ch := range st.channels {
		name, _ := ch["name"].(string)
		title, _ := ch["display_name"].(string)
		if title == "" {
			title = name
		}
		archived, _ := ch["archived"].(bool)
		for _, ext := range members(st, ch) {
			per[ext] = append(per[ext], Bookmark{Room: RoomLocal(st.owner.Tenant, name), Name: title, Nick: ext, Autojoin: !archived})
		}
	}
	exts := make([]string, 0, len(per))
	for ext := range per {
		exts = append(exts, ext)
	}
	sort.Strings(exts)
	for _, ext := range exts {
		marks := per[ext]
		sort.Slice(marks, func(i, j int) bool { return marks[i].Room < marks[j].Room })
		user := UserLocal(st.owner.Tenant, ext)
		doc := s.c.bookmarksXML(marks)
		s.mu.Lock()
		same := s.marks[user] == doc
		s.mu.Unlock()
		if same {
			continue
		}
		if err := s.c.SetBookmarks(ctx, user, marks); err != nil {
			return fmt.Errorf("bookmarks of %s: %w", user, err)
		}
		s.mu.Lock()
		s.marks[user] = doc
		s.mu.Unlock()
	}
	return nil
}

// Forget drops what is remembered of a user's bookmarks, so the next sync
// sets them again (a new or recreated account starts without any).
func (s *Sync) Forget(user string) {
	s.mu.Lock()
	delete(s.marks, user)
	s.mu.Unlock()
}

package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/worker"
)

// ServiceUser is the account Switchboard posts channel messages as: the
// owner and a MucSub subscriber of every room (of no messages: see
// serviceNode), so ejabberd archives what it posts without it joining.
const ServiceUser = "switchboard"

// serviceResource is the resource of ServiceUser's MucSub subscriptions.
const serviceResource = "switchboard"

// serviceNode is the one MucSub node the service account subscribes to:
// subject changes, which Switchboard's rooms never have (allow_change_subj
// is off and Switchboard sets none). The subscription is what lets the
// account post without joining; subscribed to the messages node, every
// channel message came back to it, and with no session ejabberd wrote each
// one into its offline store (a write that grows slower with the store,
// then a bounce once the per-user limit is reached) and a second copy into
// its own archive: three storage writes per message instead of one.
const serviceNode = "urn:xmpp:mucsub:nodes:subject"

// UserLocal is the chat account of an extension: <tenant>-<extension>,
// lower case (tenant names never contain "-", so this is unambiguous).
func UserLocal(tenant, ext string) string { return strings.ToLower(tenant + "-" + ext) }

// RoomLocal is the room of a tenant's channel: <tenant>-<channel>.
func RoomLocal(tenant, channel string) string { return models.ChatRoomLocal(tenant, channel) }

// Sync pushes the database's chat state (channels as rooms, chat accounts,
// room memberships) to ejabberd. Every operation is idempotent: it reads
// what ejabberd has and changes only the difference, so retries and
// repeated deliveries are harmless.
type Sync struct {
	c   *Client
	st  *models.Store
	log *slog.Logger
	// loop works through the pending tenants (Run); Notify wakes it.
	loop *worker.Loop

	mu      sync.Mutex
	pending map[string]bool   // tenants waiting for a sync ("" = everything)
	marks   map[string]string // bookmarks last set per user (bookmarks.go)
}

// NewSync returns a sync over the client and store.
func NewSync(c *Client, st *models.Store, log *slog.Logger) *Sync {
	return &Sync{c: c, st: st, log: log, pending: map[string]bool{}, marks: map[string]string{},
		loop: worker.New(worker.Options{Name: "chat sync failed; will retry", Poll: -1, RetryMin: time.Second, RetryMax: 30 * time.Second, Logger: log})}
}

var _ changes.Subscriber = (*Sync)(nil)

// Name is the subscriber's stable name.
func (s *Sync) Name() string { return "chat" }

// Handle applies one committed change to the chat server. An error (the
// chat server is down) makes the dispatcher deliver it again later.
func (s *Sync) Handle(ctx context.Context, c changes.Change) error {
	switch c.Resource {
	case "chat_channels":
		// Channels are addressed by id; the room is named after the
		// channel's name, which the change carries (and which never changes).
		if name := channelName(c); name != "" {
			return s.Channel(ctx, c.Tenant, name)
		}
		return s.Tenant(ctx, c.Tenant)
	case "extensions":
		// A deleted extension loses its account and memberships; type or
		// name changes do not touch chat.
		if c.Op == changes.Delete {
			return s.Tenant(ctx, c.Tenant)
		}
	case "tenants":
		if c.Op == changes.Delete {
			return s.dropTenant(ctx, c.Key)
		}
	}
	return nil
}

func channelName(c changes.Change) string {
	for _, raw := range []json.RawMessage{c.After, c.Before} {
		var obj struct {
			Name string `json:"name"`
		}
		if len(raw) > 0 && json.Unmarshal(raw, &obj) == nil && obj.Name != "" {
			return obj.Name
		}
	}
	return ""
}

// Notify asks the background loop (Run) to bring a tenant ("" for every
// tenant) in line with the database, retrying until the chat server takes
// it: the full reconcile at start, and chat accounts (which are not registry
// resources, so the outbox does not carry them). Channels, extensions and
// tenants arrive through Handle.
func (s *Sync) Notify(tenant string) {
	s.mu.Lock()
	s.pending[tenant] = true
	s.mu.Unlock()
	s.loop.Wake()
}

// Run works through notified tenants until ctx ends; a failure keeps the
// tenant pending and retries with capped exponential backoff (1 s to 30 s).
func (s *Sync) Run(ctx context.Context) {
	s.loop.Run(ctx, s.step)
}

// step reconciles the tenants notified so far; the failed ones stay
// pending for the retry.
func (s *Sync) step(ctx context.Context) (bool, error) {
	s.mu.Lock()
	todo := s.pending
	s.pending = map[string]bool{}
	s.mu.Unlock()
	// Single tenants first: the full reconcile ("") can take minutes
	// with many tenants, and serves tenants notified meanwhile between
	// its own (serveWaiting).
	order := make([]string, 0, len(todo))
	for tenant := range todo {
		if tenant != "" {
			order = append(order, tenant)
		}
	}
	if todo[""] {
		order = append(order, "")
	}
	var errs []error
	for _, tenant := range order {
		var err error
		if tenant == "" {
			err = s.All(ctx)
		} else {
			err = s.Tenant(ctx, tenant)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("tenant %q: %w", tenant, err))
			s.mu.Lock()
			s.pending[tenant] = true
			s.mu.Unlock()
		}
	}
	return false, errors.Join(errs...)
}

// serveWaiting reconciles the single tenants notified while a full
// reconcile runs, so a provisioned agent does not wait behind every other
// tenant after a start; a failure leaves its tenant pending for Run.
func (s *Sync) serveWaiting(ctx context.Context) {
	s.mu.Lock()
	var todo []string
	for t := range s.pending {
		if t != "" {
			todo = append(todo, t)
			delete(s.pending, t)
		}
	}
	s.mu.Unlock()
	for _, t := range todo {
		if err := s.Tenant(ctx, t); err != nil {
			s.log.Warn("chat sync failed; will retry", "tenant", t, "error", err)
			s.Notify(t)
		}
	}
}

// ensureService makes sure the service account and the sender-name
// account (sender.go) exist. Their passwords are random and never used:
// Switchboard acts through the admin API.
func (s *Sync) ensureService(ctx context.Context) error {
	for _, user := range []string{ServiceUser, SenderUser} {
		ok, err := s.c.CheckAccount(ctx, user)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if err := s.c.Register(ctx, user, models.NewAPIKeyValue()); err != nil && !IsConflict(err) {
			return fmt.Errorf("register %s: %w", user, err)
		}
	}
	return nil
}

// All reconciles every tenant, then removes rooms and accounts on the chat
// server that no tenant owns any more (`switchboard chat sync`, and at start).
func (s *Sync) All(ctx context.Context) error {
	if err := s.ensureService(ctx); err != nil {
		return err
	}
	// ejabberd first, then the database (see Tenant).
	rooms, err := s.c.Rooms(ctx)
	if err != nil {
		return err
	}
	users, err := s.c.RegisteredUsers(ctx)
	if err != nil {
		return err
	}
	tenants, err := s.st.Records(ctx, s.st.Registry().Resource("tenants"), models.Owner{}, nil)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	var errs []error
	for _, t := range tenants {
		name, _ := t["tenant"].(string)
		known[strings.ToLower(name)] = true
		s.serveWaiting(ctx)
		if err := s.Tenant(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	orphan := func(local string) bool {
		tenant, _, ok := strings.Cut(local, "-")
		return ok && !known[tenant]
	}
	for _, r := range rooms {
		if orphan(r) {
			if err := s.c.DestroyRoom(ctx, r); err != nil {
				return err
			}
		}
	}
	for _, u := range users {
		if orphan(u) {
			if err := s.c.Unregister(ctx, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropTenant removes a deleted tenant's rooms and accounts.
func (s *Sync) dropTenant(ctx context.Context, tenant string) error {
	prefix := strings.ToLower(tenant) + "-"
	rooms, err := s.c.Rooms(ctx)
	if err != nil {
		return err
	}
	for _, r := range rooms {
		if strings.HasPrefix(r, prefix) {
			if err := s.c.DestroyRoom(ctx, r); err != nil {
				return err
			}
		}
	}
	users, err := s.c.RegisteredUsers(ctx)
	if err != nil {
		return err
	}
	for _, u := range users {
		if strings.HasPrefix(u, prefix) {
			if err := s.c.Unregister(ctx, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// tenantState is what the database says about one tenant's chat.
type tenantState struct {
	owner    models.Owner
	accounts []string // extensions with a chat account
	channels []models.Record
}

func (s *Sync) load(ctx context.Context, tenant string) (*tenantState, error) {
	o, err := s.st.Tenant(ctx, tenant)
	if err != nil {
		return nil, err
	}
	accounts, err := s.st.ChatAccounts(ctx, o)
	if err != nil {
		return nil, err
	}
	channels, err := s.st.Records(ctx, s.st.Registry().Resource("chat_channels"), o, nil)
	if err != nil {
		return nil, err
	}
	return &tenantState{owner: o, accounts: accounts, channels: channels}, nil
}

// Tenant reconciles one tenant: accounts that the database no longer has
// are removed, every channel's room is created or corrected, and rooms of
// deleted channels are destroyed. A tenant that no longer exists is dropped.
//
// What ejabberd has is read before the database: provisioning commits an
// account's row before registering it, and channels are committed before
// their rooms are made, so anything listed on ejabberd that the (later)
// database read lacks really is gone; the other order could remove an
// account provisioned between the two reads.
func (s *Sync) Tenant(ctx context.Context, tenant string) error {
	users, err := s.c.RegisteredUsers(ctx)
	if err != nil {
		return err
	}
	existing, err := s.c.Rooms(ctx)
	if err != nil {
		return err
	}
	st, err := s.load(ctx, tenant)
	if errors.Is(err, models.ErrNotFound) {
		return s.dropTenant(ctx, tenant)
	}
	if err != nil {
		return err
	}
	if err := s.ensureService(ctx); err != nil {
		return err
	}
	prefix := strings.ToLower(st.owner.Tenant) + "-"
	want := map[string]bool{}
	for _, ext := range st.accounts {
		want[UserLocal(st.owner.Tenant, ext)] = true
	}
	for _, u := range users {
		if strings.HasPrefix(u, prefix) && !want[u] {
			if err := s.c.Unregister(ctx, u); err != nil {
				return err
			}
			s.Forget(u)
		}
		delete(want, u)
	}
	for u := range want {
		// The database has the account but the chat server lost it (a new
		// ejabberd spool). Only a hash of the password is kept, so it
		// cannot be recreated: the agent needs a rotate.
		s.log.Warn("chat account missing on the chat server; rotate its password to recreate it", "account", u)
	}
	rooms := map[string]bool{}
	for _, ch := range st.channels {
		name, _ := ch["name"].(string)
		rooms[RoomLocal(st.owner.Tenant, name)] = true
		if err := s.room(ctx, st, ch); err != nil {
			return err
		}
	}
	for _, r := range existing {
		if strings.HasPrefix(r, prefix) && !rooms[r] {
			if err := s.c.DestroyRoom(ctx, r); err != nil {
				return err
			}
		}
	}
	return s.bookmarks(ctx, st)
}

// Channel reconciles one channel's room (destroying it when the channel is gone).
func (s *Sync) Channel(ctx context.Context, tenant, channel string) error {
	st, err := s.load(ctx, tenant)
	if errors.Is(err, models.ErrNotFound) {
		return s.dropTenant(ctx, tenant)
	}
	if err != nil {
		return err
	}
	for _, ch := range st.channels {
		if ch["name"] == channel {
			if err := s.ensureService(ctx); err != nil {
				return err
			}
			if err := s.room(ctx, st, ch); err != nil {
				return err
			}
			return s.bookmarks(ctx, st)
		}
	}
	if err := s.c.DestroyRoom(ctx, RoomLocal(st.owner.Tenant, channel)); err != nil {
		return err
	}
	return s.bookmarks(ctx, st)
}

// RoomOptions are the room settings a channel maps to. Every room is
// persistent, archived (MAM) and members-only (tenant isolation: only the
// tenant's chat users are members); read-only and archived channels are
// moderated without voice for members, so only the service account posts.
func RoomOptions(ch models.Record) map[string]string {
	name, _ := ch["name"].(string)
	title, _ := ch["display_name"].(string)
	if title == "" {
		title = name
	}
	topic, _ := ch["topic"].(string)
	readOnly, _ := ch["read_only"].(bool)
	archived, _ := ch["archived"].(bool)
	return map[string]string{
		"title":              title,
		"description":        topic,
		"persistent":         "true",
		"mam":                "true",
		"members_only":       "true",
		"public":             "false",
		"public_list":        "false",
		"allow_subscription": "true",
		"moderated":          "true",
		"members_by_default": fmt.Sprint(!readOnly && !archived),
		"allow_change_subj":  "false",
		"anonymous":          "false",
	}
}

// members are the extensions that belong in a channel's room: every chat
// user of the tenant for public channels, the listed ones for private.
func members(st *tenantState, ch models.Record) []string {
	if ch["visibility"] != "private" {
		return st.accounts
	}
	has := map[string]bool{}
	for _, a := range st.accounts {
		has[a] = true
	}
	var out []string
	list, _ := ch["members"].([]any)
	for _, m := range list {
		if ext, _ := m.(string); has[ext] {
			out = append(out, ext)
		}
	}
	sort.Strings(out)
	return out
}

// room creates or corrects one channel's room: options, affiliations, the
// service account's subscription, and the channel's jid.
func (s *Sync) room(ctx context.Context, st *tenantState, ch models.Record) error {
	name, _ := ch["name"].(string)
	room := RoomLocal(st.owner.Tenant, name)
	want := RoomOptions(ch)
	have, err := s.c.RoomOptions(ctx, room)
	switch {
	case errors.Is(err, ErrNoRoom):
		if err := s.c.CreateRoom(ctx, room, want); err != nil && !IsRoomExists(err) {
			return fmt.Errorf("create room %s: %w", room, err)
		}
	case err != nil:
		return err
	default:
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if have[k] != want[k] {
				if err := s.c.ChangeRoomOption(ctx, room, k, want[k]); err != nil {
					return fmt.Errorf("room %s option %s: %w", room, k, err)
				}
			}
		}
	}
	// The sender-name account posts named messages as a subscriber, which
	// a members-only room accepts from an affiliated account only; its
	// subscription (and nick) is the queue's to set.
	wantAff := map[string]string{s.c.UserJID(ServiceUser): "owner", s.c.UserJID(SenderUser): "member"}
	for _, ext := range members(st, ch) {
		wantAff[s.c.UserJID(UserLocal(st.owner.Tenant, ext))] = "member"
	}
	affs, err := s.c.RoomAffiliations(ctx, room)
	if err != nil {
		return err
	}
	for _, a := range affs {
		jid := a.Username + "@" + a.Domain
		if w, ok := wantAff[jid]; ok && w == a.Affiliation {
			delete(wantAff, jid)
			continue
		}
		if _, ok := wantAff[jid]; !ok && a.Affiliation != "outcast" {
			if err := s.c.SetAffiliation(ctx, room, jid, "none"); err != nil {
				return err
			}
		}
	}
	jids := make([]string, 0, len(wantAff))
	for j := range wantAff {
		jids = append(jids, j)
	}
	sort.Strings(jids)
	for _, j := range jids {
		if err := s.c.SetAffiliation(ctx, room, j, wantAff[j]); err != nil {
			return err
		}
	}
	if err := s.c.Subscribe(ctx, s.c.UserJID(ServiceUser)+"/"+serviceResource, "switchboard", room, serviceNode); err != nil {
		return fmt.Errorf("subscribe to %s: %w", room, err)
	}
	return s.st.SetChannelJID(ctx, st.owner, name, s.c.RoomJID(room))
}

// ServiceJID is the full JID channel messages are sent from.
func (c *Client) ServiceJID() string { return c.UserJID(ServiceUser) + "/" + serviceResource }

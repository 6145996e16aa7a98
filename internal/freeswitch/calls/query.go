package calls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// liveKey is the live sorted set of a tenant, or of everything for "".
func (t *Tracker) liveKey(tenant string) string {
	if tenant == "" {
		return t.prefix + "live"
	}
	return t.prefix + "live:" + tenant
}

// List returns the live channels of a tenant ("" = all tenants, for platform
// callers), oldest first, with limit and offset, and the total number of
// live channels in that scope. limit <= 0 means no limit.
func (t *Tracker) List(ctx context.Context, tenant string, limit, offset int) ([]Channel, int, error) {
	key := t.liveKey(tenant)
	offset = max(offset, 0)
	stop := int64(-1)
	if limit > 0 {
		stop = int64(offset + limit - 1)
	}
	pipe := t.rdb.Pipeline()
	total := pipe.ZCard(ctx, key)
	members := pipe.ZRange(ctx, key, int64(offset), stop)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, 0, fmt.Errorf("list channels %q: %w", tenant, err)
	}
	ms := members.Val()
	if len(ms) == 0 {
		return nil, int(total.Val()), nil
	}
	keys := make([]string, len(ms))
	for i, m := range ms {
		keys[i] = t.prefix + "ch:" + m
	}
	vals, err := t.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("list channels %q: %w", tenant, err)
	}
	out := make([]Channel, 0, len(vals))
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue // ended between the two reads
		}
		ch, err := decodeRecord(s)
		if err != nil {
			return nil, 0, fmt.Errorf("list channels %q: %w", tenant, err)
		}
		if ch.State != StateHangup {
			out = append(out, ch)
		}
	}
	return out, int(total.Val()), nil
}

// Get returns the channel with the given id. Ended channels stay readable
// (State "hangup") for Options.EndedTTL. Callers must check Channel.Tenant
// against the caller's tenant.
func (t *Tracker) Get(ctx context.Context, id string) (Channel, error) {
	m, err := t.rdb.Get(ctx, t.prefix+"chid:"+id).Result()
	if errors.Is(err, redis.Nil) {
		return Channel{}, ErrNotFound
	}
	if err != nil {
		return Channel{}, fmt.Errorf("get channel %q: %w", id, err)
	}
	node, uuid, err := splitMember(m)
	if err != nil {
		return Channel{}, fmt.Errorf("get channel %q: %w", id, err)
	}
	return t.ByUUID(ctx, node, uuid)
}

// ByUUID returns the channel with FreeSWITCH Unique-ID uuid on node.
func (t *Tracker) ByUUID(ctx context.Context, node, uuid string) (Channel, error) {
	raw, err := t.rdb.Get(ctx, t.prefix+"ch:"+member(node, uuid)).Result()
	if errors.Is(err, redis.Nil) {
		return Channel{}, ErrNotFound
	}
	if err != nil {
		return Channel{}, fmt.Errorf("get channel %s/%s: %w", node, uuid, err)
	}
	ch, err := decodeRecord(raw)
	if err != nil {
		return Channel{}, fmt.Errorf("get channel %s/%s: %w", node, uuid, err)
	}
	if ch.ID == "" {
		return Channel{}, ErrNotFound // a stub made by the peer's bridge event
	}
	return ch, nil
}

// decodeRecord decodes the public part of a stored record
// ("<public JSON>\n<internal JSON>", see apply.lua).
func decodeRecord(raw string) (Channel, error) {
	pub, _, _ := strings.Cut(raw, "\n")
	var ch Channel
	if err := json.Unmarshal([]byte(pub), &ch); err != nil {
		return Channel{}, fmt.Errorf("decode channel record: %w", err)
	}
	return ch, nil
}

// RingingAt returns the live channels of tenant ringing at extension ext:
// legs FreeSWITCH placed to the extension (direction outbound) that are not
// answered yet, oldest first. Only the tenant's own index is read, so
// another tenant's channel is never returned. Directed pickup uses it.
func (t *Tracker) RingingAt(ctx context.Context, tenant, ext string) ([]Channel, error) {
	if tenant == "" || ext == "" {
		return nil, nil
	}
	chs, _, err := t.List(ctx, tenant, 0, 0)
	if err != nil {
		return nil, err
	}
	var out []Channel
	for _, ch := range chs {
		if ch.Tenant == tenant && ch.Extension == ext && ch.Direction == "outbound" && (ch.State == StateRinging || ch.State == StateEarly) {
			out = append(out, ch)
		}
	}
	return out, nil
}

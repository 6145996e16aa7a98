package calls

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// CauseNodeRestarted is the hangup cause of CDRs for channels ended because
// their FreeSWITCH process is gone (its Core-UUID changed); their EndedAt is
// when the change was seen.
const CauseNodeRestarted = "UNKNOWN_FREESWITCH_RESTARTED"

// NoteCore records that node's events now come from the FreeSWITCH process
// with Core-UUID core. FreeSWITCH gets a new Core-UUID at every start, so
// when it differs from the one known (in this replica's memory or in
// Redis, shared by the replicas) every live channel of the old process is
// gone: they are ended, with a CDR each (CauseNodeRestarted). It reports
// whether a change was handled. Consume calls it for every event; it costs
// a Redis round trip only when this replica has not seen core yet.
func (t *Tracker) NoteCore(ctx context.Context, node, core string) (bool, error) {
	if core == "" || node == "" {
		return false, nil
	}
	if v, ok := t.cores.Load(node); ok && v.(string) == core {
		return false, nil
	}
	old, err := t.rememberCore(ctx, node, core)
	if err != nil {
		return false, err
	}
	if old == "" || old == core {
		return false, nil
	}
	if err := t.EndOtherCores(ctx, node, core); err != nil {
		return true, err
	}
	t.opts.Logger.Info("freeswitch restarted: channels of the old process ended", "node", node, "old_core", old, "core", core)
	return true, nil
}

// rememberCore stores core as node's current Core-UUID and returns the
// previous one ("" when none was known).
func (t *Tracker) rememberCore(ctx context.Context, node, core string) (string, error) {
	old, err := t.rdb.SetArgs(ctx, t.prefix+"core:"+node, core, redis.SetArgs{Get: true}).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("note core-uuid of %s: %w", node, err)
	}
	t.cores.Store(node, core)
	return old, nil
}

// EndOtherCores ends every live channel of node that belongs to a
// FreeSWITCH process other than core.
func (t *Tracker) EndOtherCores(ctx context.Context, node, core string) error {
	live, err := t.rdb.SMembers(ctx, t.prefix+"live:node:"+node).Result()
	if err != nil {
		return fmt.Errorf("end channels of old core on %s: %w", node, err)
	}
	now := t.opts.Now()
	patches := make([]patch, 0, len(live))
	for _, m := range live {
		_, uuid, err := splitMember(m)
		if err != nil {
			continue
		}
		p := t.basePatch(kindResyncEnd, now)
		p.Node, p.UUID, p.Core = node, uuid, core
		p.HangupCause = CauseNodeRestarted
		p.EndedAt = stamp(now)
		p.CutoffUs = strconv.Itoa(0) // never end a channel of core itself
		patches = append(patches, p)
	}
	if err := t.runBatch(ctx, patches); err != nil {
		return fmt.Errorf("end channels of old core on %s: %w", node, err)
	}
	return nil
}

// NodeInfo is what the tracker knows about a node from its events.
type NodeInfo struct {
	CoreUUID     string
	LastEventAt  time.Time
	LiveChannels int64
}

// NodeInfo returns node's current Core-UUID, when an event of it was last
// applied (by any replica, to within a second) and its live channel count.
func (t *Tracker) NodeInfo(ctx context.Context, node string) (NodeInfo, error) {
	var core, seen *redis.StringCmd
	var live *redis.IntCmd
	_, err := t.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		core = p.Get(ctx, t.prefix+"core:"+node)
		seen = p.Get(ctx, t.prefix+"nodeseen:"+node)
		live = p.SCard(ctx, t.prefix+"live:node:"+node)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return NodeInfo{}, fmt.Errorf("node info %s: %w", node, err)
	}
	info := NodeInfo{CoreUUID: core.Val(), LiveChannels: live.Val()}
	if ms, err := strconv.ParseInt(seen.Val(), 10, 64); err == nil && ms > 0 {
		info.LastEventAt = time.UnixMilli(ms).UTC()
	}
	return info, nil
}

// noteSeen records, at most once a second per node, that an event of node
// was applied, for NodeInfo.
func (t *Tracker) noteSeen(ctx context.Context, node string) {
	now := t.opts.Now()
	if v, ok := t.seen.Load(node); ok && now.Sub(v.(time.Time)) < time.Second {
		return
	}
	t.seen.Store(node, now)
	if err := t.rdb.Set(ctx, t.prefix+"nodeseen:"+node, now.UnixMilli(), 24*time.Hour).Err(); err != nil {
		t.opts.Logger.Warn("note node activity", "node", node, "error", err)
	}
}

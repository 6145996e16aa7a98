package calls

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// resyncGrace protects channels created after FreeSWITCH answered `show
// channels` but before Resync ran: live channels that started less than this
// before the call are never ended by it.
const resyncGrace = 10 * time.Second

// showChannels is the body of `show channels as json`; with zero rows
// FreeSWITCH prints only {"row_count": 0}.
type showChannels struct {
	RowCount int                 `json:"row_count"`
	Rows     []map[string]string `json:"rows"`
}

// Resync makes the live state of node match the body of `show channels as
// json` taken from it: it adds the listed channels it does not know (already
// known ones are left alone: their events are more precise) and ends the live
// channels of that node missing from the list. Those ended while no replica
// was listening, so each still gets its CDR, with hangup cause
// CauseEndedWhileDisconnected and the resync time as end. Call it on every
// (re)connect, right after subscribing to events; it is correct after a
// switchboard restart, an emptied Redis and a FreeSWITCH restart (empty
// list). Channels added here carry no bridge peer (the listing has none) and
// their state comes from callstate.
func (t *Tracker) Resync(ctx context.Context, node, showChannelsJSON string) error {
	return t.ResyncCore(ctx, node, "", showChannelsJSON)
}

// ResyncCore is Resync for a listing taken from the FreeSWITCH process with
// Core-UUID core (global_getvar core_uuid). Live channels of any other
// process are ended whatever their age: after a restart none of them can
// exist. It also records core as the node's current process (see
// NoteCore), so events do not report the change a second time.
func (t *Tracker) ResyncCore(ctx context.Context, node, core, showChannelsJSON string) error {
	var sc showChannels
	if err := json.Unmarshal([]byte(showChannelsJSON), &sc); err != nil {
		return fmt.Errorf("resync %s: decode show channels: %w", node, err)
	}
	now := t.opts.Now()
	seen := make(map[string]bool, len(sc.Rows))
	var patches []patch
	for _, row := range sc.Rows {
		if row["uuid"] == "" {
			continue
		}
		seen[member(node, row["uuid"])] = true
		p := t.patchFromRow(node, row, now)
		p.Core = core
		patches = append(patches, p)
	}
	live, err := t.rdb.SMembers(ctx, t.prefix+"live:node:"+node).Result()
	if err != nil {
		return fmt.Errorf("resync %s: list live: %w", node, err)
	}
	cutoff := strconv.FormatInt(now.Add(-resyncGrace).UnixMicro(), 10)
	for _, m := range live {
		if seen[m] {
			continue
		}
		_, uuid, err := splitMember(m)
		if err != nil {
			continue
		}
		p := t.basePatch(kindResyncEnd, now)
		p.Node, p.UUID = node, uuid
		p.HangupCause = CauseEndedWhileDisconnected
		p.EndedAt = stamp(now)
		p.CutoffUs = cutoff
		p.Core = core
		patches = append(patches, p)
	}
	if err := t.runBatch(ctx, patches); err != nil {
		return fmt.Errorf("resync %s: %w", node, err)
	}
	if core != "" {
		if _, err := t.rememberCore(ctx, node, core); err != nil {
			return fmt.Errorf("resync %s: %w", node, err)
		}
	}
	return nil
}

// patchFromRow turns one `show channels` row into a resync patch.
func (t *Tracker) patchFromRow(node string, row map[string]string, now time.Time) patch {
	p := t.basePatch(kindResync, now)
	p.Node, p.UUID = node, row["uuid"]
	p.Tech = technology(row["name"])
	p.Direction = row["direction"]
	p.Context = row["context"]
	p.CallUUID = row["call_uuid"]
	p.CallerIDName, p.CallerIDNumber, p.Destination = row["cid_name"], row["cid_num"], row["dest"]

	presExt, presTenant := presenceUser(row["presence_id"])
	p.Tenant = t.tenantOf("", row["context"], row["initial_context"], presTenant)
	if presTenant != "" && presTenant == p.Tenant {
		p.Extension = presExt
	}
	external := p.CallerIDNumber
	if p.Direction == "outbound" {
		external = p.Destination
	}
	p.Name = firstName(p.Extension, external, channelUser(row["name"]))

	started := now
	if sec, err := strconv.ParseInt(row["created_epoch"], 10, 64); err == nil && sec > 0 {
		started = time.Unix(sec, 0)
	}
	p.setStarted(started)
	switch row["callstate"] {
	case "EARLY":
		p.Rank = rankEarly
	case "ACTIVE", "HELD", "UNHELD":
		p.Rank = rankAnswered
	default:
		p.Rank = rankRinging
	}
	p.Held = row["callstate"] == "HELD"
	return p
}

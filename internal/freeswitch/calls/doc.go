// Package calls keeps the live state of FreeSWITCH channels in Redis, built
// from the nodes' ESL channel events, and answers queries about it.
//
// A Tracker applies one event with one EVALSHA of a Lua script that reads the
// channel record, merges the event and writes the result atomically, so two
// replicas applying the same event stream (for example around a lease
// hand-over) cannot interleave halfway. The merge is idempotent and tolerates
// duplicates and reordering: the call lifecycle (ringing < early < answered <
// hangup) only moves forward, and the bridge, hold, recording and caller
// information groups each keep the Event-Sequence of the last event applied to
// them and ignore older ones. An ended channel stays as a tombstone for
// Options.EndedTTL so late events for it cannot resurrect it.
//
// Channel identifiers handed to API users have the shape
// <technology>/<name>-<tenant>-<sequence>, for example SIP/1001-acme-0000002a,
// where sequence is 8 lowercase hex digits from a per-tenant counter. Neither
// name nor tenant may contain '-', so the identifier parses unambiguously.
//
// Redis layout (every key starts with Options.Prefix, "sb:{calls}:" by
// default and "sb:<installation id>:{calls}:" in the server, shown here as
// sb:; a "member" is "<node>:<uuid>"):
//
//	sb:ch:<node>:<uuid>       string "<Channel JSON>\n<merge state JSON>";
//	                          TTL EndedTTL once ended (tombstone) or while it
//	                          is only a stub made by the peer's bridge event
//	sb:chid:<id>              string, channel id -> member
//	sb:chseq:<tenant>         integer, per-tenant id counter (INCR)
//	sb:chres:<member>         string, an id reserved by ReserveID for a
//	                          channel not seen yet; taken by its first event
//	sb:live                   sorted set of members of live channels, scored
//	                          by start time (unix seconds)
//	sb:live:<tenant>          the same, per tenant (not for tenantless channels)
//	sb:live:node:<node>       set of members live on a node, for Resync
//	sb:cdr:once:<member>      SET NX guard: the CDR of a channel is queued once;
//	                          lives 6 x EndedTTL and also blocks late events
//	sb:cdr:pending            list of CDR envelopes not yet accepted by OnEnd
//	sb:cdr:retrylock          lock so one replica at a time retries CDRs
//	sb:stream                 stream of every change (channels and calls),
//	                          entries tagged with their tenant (SSE resume)
//	sb:call:<id>              a callback call placed through the API
//	sb:core:<node>            the node's FreeSWITCH Core-UUID
//	sb:nodeseen:<node>        when the node's events were last applied
//
// Round trips: Apply costs one EVALSHA per event, plus one LREM when a
// channel ends and OnEnd accepted its CDR. ApplyBatch, Consume and Replay
// pipeline many events per round trip (about 0.02 per event in
// BenchmarkTrackerReplay). Changes are published from inside the script, so
// the change stream never announces a state that was not stored.
//
// Redis Cluster: the prefix's hash tag puts every key of the tracker in one
// slot. The script takes its keys in KEYS (see apply.lua); the few whose
// names come from stored data are formed from the same prefix, so they
// hash to the same slot, which a cluster accepts.
package calls

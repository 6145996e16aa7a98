package calls

import (
	"errors"
	"time"
)

// ErrNotFound is returned when no live or recently ended channel matches.
var ErrNotFound = errors.New("calls: channel not found")

// Channel states, in the order a call normally goes through them.
const (
	StateRinging  = "ringing"
	StateEarly    = "early"
	StateAnswered = "answered"
	StateBridged  = "bridged"
	StateHeld     = "held"
	StateHangup   = "hangup"
)

// Channel is the live state of one FreeSWITCH channel as stored in Redis and
// shown to API users. Times are UTC; zero times are omitted from JSON.
type Channel struct {
	ID             string    `json:"id"`
	Node           string    `json:"node"`
	UUID           string    `json:"uuid"`
	Tenant         string    `json:"tenant"`
	Direction      string    `json:"direction"`
	State          string    `json:"state"`
	CallerIDName   string    `json:"caller_id_name"`
	CallerIDNumber string    `json:"caller_id_number"`
	Destination    string    `json:"destination"`
	Extension      string    `json:"extension"`
	StartedAt      time.Time `json:"started_at,omitzero"`
	AnsweredAt     time.Time `json:"answered_at,omitzero"`
	BridgedAt      time.Time `json:"bridged_at,omitzero"`
	// BridgedTo is the channel id of the peer while bridged (empty when the
	// peer is not known yet or not tracked).
	BridgedTo     string    `json:"bridged_to"`
	PeerUUID      string    `json:"peer_uuid"`
	Recording     bool      `json:"recording"`
	RecordingPath string    `json:"recording_path"`
	CallUUID      string    `json:"call_uuid"`
	Context       string    `json:"context"`
	LastSeq       uint64    `json:"last_seq"`
	UpdatedAt     time.Time `json:"updated_at,omitzero"`
}

// Change types published on the change stream.
const (
	ChangeCreated = "channel.created"
	ChangeUpdated = "channel.updated"
	ChangeEnded   = "channel.ended"
)

// Change is one message of the change stream: a channel after the change,
// or (type call.updated) a callback call after the change.
type Change struct {
	Type    string  `json:"type"`
	Channel Channel `json:"channel,omitzero"`
	Call    *Call   `json:"call,omitempty"`
}

// CDR is the record of an ended channel handed to Options.OnEnd.
type CDR struct {
	ChannelID       string    `json:"channel_id"`
	UUID            string    `json:"uuid"`
	Node            string    `json:"node"`
	Tenant          string    `json:"tenant"`
	Direction       string    `json:"direction"`
	CallerIDName    string    `json:"caller_id_name"`
	CallerIDNumber  string    `json:"caller_id_number"`
	Destination     string    `json:"destination"`
	Extension       string    `json:"extension"`
	StartedAt       time.Time `json:"started_at,omitzero"`
	AnsweredAt      time.Time `json:"answered_at,omitzero"`
	EndedAt         time.Time `json:"ended_at,omitzero"`
	DurationSeconds int       `json:"duration_seconds"`
	Billsec         int       `json:"billsec"`
	HangupCause     string    `json:"hangup_cause"`
	RecordingPath   string    `json:"recording_path"`
}

// CauseEndedWhileDisconnected is the hangup cause of CDRs written by Resync for
// channels that ended while no replica was receiving the node's events; their
// EndedAt is the time of the resync, so durations are upper bounds.
const CauseEndedWhileDisconnected = "UNKNOWN_ENDED_WHILE_DISCONNECTED"

package dialplan

// Trace explains a dialplan render, so the API can show why a call went
// where it did. Empty fields did not apply.
type Trace struct {
	Context string `json:"context"`
	Number  string `json:"number"`
	Caller  string `json:"caller,omitempty"`
	// CallerContact is the contact name the caller's number found (caller
	// name lookup), as rendered.
	CallerContact string `json:"caller_contact,omitempty"`
	// Match is what the number matched: did, extension, extension_failover,
	// special_mailbox, routing_condition, hunt_group, conference, ivr, queue, queue_after, special_endpoint, prompt_then_hangup, feature, park_return, emergency, outbound, or ""
	// when nothing did (the document is then NotFound).
	Match  string `json:"match"`
	Reason string `json:"reason,omitempty"`

	RouteID   int64  `json:"route_id,omitempty"`
	RouteName string `json:"route_name,omitempty"`

	ConditionID     int64  `json:"condition_id,omitempty"`
	ConditionName   string `json:"condition_name,omitempty"`
	ConditionBranch string `json:"condition_branch,omitempty"` // match or nomatch
	ConditionReason string `json:"condition_reason,omitempty"`

	ScheduleID   int64  `json:"schedule_id,omitempty"`
	ScheduleOpen *bool  `json:"schedule_open,omitempty"`
	Holiday      string `json:"holiday,omitempty"`
	OfficeMode   string `json:"office_mode,omitempty"`

	Destination *Destination `json:"destination,omitempty"`
	Feature     string       `json:"feature,omitempty"`
	Pattern     string       `json:"pattern,omitempty"`
	Dialled     string       `json:"dialled,omitempty"`
	Trunks      []string     `json:"trunks,omitempty"`

	// TimeDependent is true when the time given to the render changed the
	// answer (schedules, office mode, overrides): such renders must not be
	// cached beyond the current minute.
	TimeDependent bool `json:"time_dependent,omitempty"`
	// CallerDependent is true when the caller's number, name or extension
	// changed the answer, so a cache key must include them.
	CallerDependent bool `json:"caller_dependent,omitempty"`
	// LiveDependent is true when live channel state (a directed pickup)
	// changed the answer: such renders must never be cached.
	LiveDependent bool `json:"live_dependent,omitempty"`
}

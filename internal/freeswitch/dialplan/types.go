package dialplan

import "github.com/switchboard/switchboard/internal/freeswitch/schedule"

// The types below mirror the stored records of resources.md: each field's
// JSON name is the registry field it is read from, and the loader (package
// fsxml) derives its SELECT list and column decoders from these tags, so a
// renamed or missing registry field fails at start and in fsxml's contract
// test. Only the fields rendering needs are present. Secrets arrive in clear text
// from the loader (which decrypts them) and leave only as FreeSWITCH needs them.

// Tenant is a customer organisation (resources.md §1.1).
type Tenant struct {
	Tenant string `json:"tenant"`
	// Country reads national numbers: trunk callerid_format and the
	// caller name lookup.
	Country              string   `json:"country"`
	CallerID             string   `json:"callerid"`
	EmergencyCallerID    string   `json:"emergency_callerid"`
	OutboundCallerIDName string   `json:"outbound_callerid_name"`
	Enabled              bool     `json:"enabled"`
	Timezone             string   `json:"timezone"`
	Language             string   `json:"language"`
	EmergencyNumbers     []string `json:"emergency_numbers"`
	MaxConcurrentCalls   int      `json:"max_concurrent_calls"`
	RecordingPolicy      string   `json:"recording_policy"`
	// CRMCallerNameLookup shows a known contact's name on inbound calls
	// from its number (PublicSnapshot.CallerContactName).
	CRMCallerNameLookup bool `json:"crm_caller_name_lookup"`
	// AllowSIPURIEndpoints lets special endpoints bridge to SIP URIs
	// (a toll-fraud guard, checked again at render time).
	AllowSIPURIEndpoints bool `json:"allow_sip_uri_endpoints"`
	// MOHClassID is the tenant's default hold music (0: the platform's).
	MOHClassID int64 `json:"moh_class_id"`
}

// Forward is one of an extension's four call-forward settings.
type Forward struct {
	Enabled     bool   `json:"enabled"`
	Destination string `json:"destination"`
}

// Extension is a user's number and SIP account (resources.md §2.1).
//
// Every tenant model holds one per user (50,000 at the benchmark's scale),
// so the fields are ordered by size to leave no padding (strings, the
// forward settings, 8-byte integers, then the 4-byte ones and the flags
// packed together), and the two small counts are 32-bit: 368 bytes
// instead of 408. TestExtensionStaysCompact (package fsxml) keeps it so.
type Extension struct {
	Name             string `json:"name"`
	FirstName        string `json:"first_name"`
	LastName         string `json:"last_name"`
	CallerID         string `json:"callerid"`
	Email            string `json:"email"`
	Mobile           string `json:"mobile"`
	SIPSecret        string `json:"sip_secret"`
	VoicemailPIN     string `json:"voicemail_pin"`
	VoicemailEmail   string `json:"voicemail_email"`
	CallPermission   string `json:"call_permission"`
	Record           string `json:"record"`
	AccountCode      string `json:"accountcode"`
	OutboundCallerID string `json:"outbound_callerid"`
	Language         string `json:"language"`
	Timezone         string `json:"timezone"`

	ForwardAll          Forward `json:"forward_all"`
	ForwardBusy         Forward `json:"forward_busy"`
	ForwardNoAnswer     Forward `json:"forward_no_answer"`
	ForwardUnregistered Forward `json:"forward_unregistered"`

	EmergencyLocationID int64 `json:"emergency_location_id"`
	// MOHClassID is what a caller hears while this extension holds
	// (0: the tenant's).
	MOHClassID int64 `json:"moh_class_id"`

	RingSeconds               int32 `json:"ring_seconds"`
	MaxRegistrations          int32 `json:"max_registrations"`
	VoicemailEnabled          bool  `json:"voicemail_enabled"`
	VoicemailAttachAudio      bool  `json:"voicemail_attach_audio"`
	VoicemailDeleteAfterEmail bool  `json:"voicemail_delete_after_email"`
	DND                       bool  `json:"dnd"`
	CallWaiting               bool  `json:"call_waiting"`
	DirectoryVisible          bool  `json:"directory_visible"`
	DirectoryExtensionVisible bool  `json:"directory_extension_visible"`
	Enabled                   bool  `json:"enabled"`
}

// Destination is where a call is sent (resources.md §0).
type Destination struct {
	Type   string `json:"type"`
	Target string `json:"target"`
}

// DID is a public number assigned to a tenant (resources.md §1.7).
type DID struct {
	ID             int64  `json:"id"`
	Number         string `json:"number"`
	Tenant         string `json:"tenant"`
	TrunkID        int64  `json:"trunk_id"`
	InboundRouteID int64  `json:"inbound_route_id"`
	CallerIDName   string `json:"caller_id_name"`
	Enabled        bool   `json:"enabled"`
}

// InboundRoute sends calls to a DID somewhere (resources.md §2.6).
// Optional destinations are nil when unset; RoutingConditionID is 0 when unset.
type InboundRoute struct {
	ID                 int64        `json:"id"`
	Name               string       `json:"name"`
	DID                string       `json:"did"`
	CallerMatch        string       `json:"caller_match"`
	Destination        Destination  `json:"destination"`
	RoutingConditionID int64        `json:"routing_condition_id"`
	DayDestination     *Destination `json:"day_destination"`
	NightDestination   *Destination `json:"night_destination"`
	HolidayDestination *Destination `json:"holiday_destination"`
	CallerIDNamePrefix string       `json:"callerid_name_prefix"`
	Language           string       `json:"language"`
	Enabled            bool         `json:"enabled"`
}

// Pattern is one dialled-number pattern of an outbound route.
type Pattern struct {
	Match       string `json:"match"`
	StripDigits int    `json:"strip_digits"`
	Prepend     string `json:"prepend"`

	// compiled is Match compiled by Prepare (nil: compile on use).
	compiled *compiledPattern
}

// OutboundRoute sends dialled numbers out through trunks (resources.md §2.7).
type OutboundRoute struct {
	ID                 int64     `json:"id"`
	Name               string    `json:"name"`
	Priority           int       `json:"priority"`
	Patterns           []Pattern `json:"patterns"`
	Trunks             []string  `json:"trunks"`
	CallerIDPolicy     string    `json:"callerid_policy"`
	CallerIDFixed      string    `json:"callerid_fixed"`
	MinPermission      string    `json:"min_permission"`
	Emergency          bool      `json:"emergency"`
	MaxDurationSeconds int       `json:"max_duration_seconds"`
	Enabled            bool      `json:"enabled"`
}

// SIPTrunk is a carrier connection, rendered as a sofia gateway (resources.md §1.8).
type SIPTrunk struct {
	ID             int64    `json:"id"`
	Name           string   `json:"name"`
	Tenants        []string `json:"tenants"`
	Host           string   `json:"host"`
	Port           int      `json:"port"`
	Transport      string   `json:"transport"`
	Register       bool     `json:"register"`
	Username       string   `json:"username"`
	Password       string   `json:"password"`
	AuthUsername   string   `json:"auth_username"`
	Realm          string   `json:"realm"`
	FromUser       string   `json:"from_user"`
	FromDomain     string   `json:"from_domain"`
	OutboundProxy  string   `json:"outbound_proxy"`
	ExpireSeconds  int      `json:"expire_seconds"`
	RetrySeconds   int      `json:"retry_seconds"`
	PingSeconds    int      `json:"ping_seconds"`
	CallerIDInFrom bool     `json:"caller_id_in_from"`
	CallerIDFormat string   `json:"callerid_format"`
	DTMFMode       string   `json:"dtmf_mode"`
	MaxChannels    int      `json:"max_channels"`
	Codecs         []string `json:"codecs"`
	Servers        []string `json:"servers"`
	Enabled        bool     `json:"enabled"`
}

// Schedule is a tenant's opening hours; evaluated by package schedule.
type Schedule = schedule.Schedule

// RoutingCondition is a named two-way switch (resources.md §2.8).
type RoutingCondition struct {
	ID                 int64       `json:"id"`
	Name               string      `json:"name"`
	Number             string      `json:"number"`
	Kind               string      `json:"kind"`
	ScheduleID         int64       `json:"schedule_id"`
	OfficeModes        []string    `json:"office_modes"`
	CallerPrefixes     []string    `json:"caller_prefixes"`
	MatchDestination   Destination `json:"match_destination"`
	NomatchDestination Destination `json:"nomatch_destination"`
	Override           string      `json:"override"`
	OverrideUntil      string      `json:"override_until"`
	Enabled            bool        `json:"enabled"`
}

// FeatureExtension is a star code bound to a built-in feature (resources.md §2.11).
type FeatureExtension struct {
	ID          int64  `json:"id"`
	Feature     string `json:"feature"`
	Code        string `json:"code"`
	PINRequired bool   `json:"pin_required"`
	Enabled     bool   `json:"enabled"`
}

// OfficeMode is the tenant's business state switch (resources.md §2.12).
type OfficeMode struct {
	Mode       string `json:"mode"`
	ScheduleID int64  `json:"schedule_id"`
	Until      string `json:"until"`
}

// EmergencyLocation gives extensions their emergency callback number (resources.md §2.19).
type EmergencyLocation struct {
	ID                int64  `json:"id"`
	Name              string `json:"name"`
	EmergencyCallerID string `json:"emergency_callerid"`
	IsDefault         bool   `json:"is_default"`
}

// SpecialMailbox is a voicemail box owned by no extension (resources.md §2.14).
type SpecialMailbox struct {
	ID               int64    `json:"id"`
	Name             string   `json:"name"`
	Number           string   `json:"number"`
	PIN              string   `json:"pin"`
	Emails           []string `json:"emails"`
	AttachAudio      bool     `json:"attach_audio"`
	DeleteAfterEmail bool     `json:"delete_after_email"`
	Language         string   `json:"language"`
	Enabled          bool     `json:"enabled"`
	// NotifyExtensions are the phones whose message-waiting light shows
	// this box (sent over ESL by package mwi, not rendered).
	NotifyExtensions  []string `json:"notify_extensions"`
	MaxMessages       int      `json:"max_messages"`
	MaxMessageSeconds int      `json:"max_message_seconds"`
}

// CompanyDirectory is the tenant's dial-by-name settings (resources.md
// §2.16).
type CompanyDirectory struct {
	Number            string `json:"number"`
	SearchBy          string `json:"search_by"`
	MinSearchDigits   int    `json:"min_search_digits"`
	AnnounceExtension bool   `json:"announce_extension"`
}

// VoicePrompt is a stored prompt; Filename is server-chosen (resources.md §2.22).
type VoicePrompt struct {
	ID       int64  `json:"id"`
	Filename string `json:"filename"`
}

// TenantSnapshot is everything one tenant's renders need. Trunks holds only
// the trunks this tenant may use.
type TenantSnapshot struct {
	Tenant             Tenant              `json:"tenant"`
	Extensions         []Extension         `json:"extensions"`
	InboundRoutes      []InboundRoute      `json:"inbound_routes"`
	OutboundRoutes     []OutboundRoute     `json:"outbound_routes"`
	Schedules          []Schedule          `json:"schedules"`
	RoutingConditions  []RoutingCondition  `json:"routing_conditions"`
	FeatureExtensions  []FeatureExtension  `json:"feature_extensions"`
	OfficeMode         *OfficeMode         `json:"office_mode"`
	EmergencyLocations []EmergencyLocation `json:"emergency_locations"`
	SpecialMailboxes   []SpecialMailbox    `json:"special_mailboxes"`
	Trunks             []SIPTrunk          `json:"trunks"`
	VoicePrompts       []VoicePrompt       `json:"voice_prompts"`
	HuntGroups         []HuntGroup         `json:"hunt_groups"`
	ConferenceRooms    []ConferenceRoom    `json:"conference_rooms"`
	IVRMenus           []IVRMenu           `json:"ivr_menus"`
	Queues             []Queue             `json:"queues"`
	MusicOnHold        []MusicOnHold       `json:"music_on_hold"`
	Agents             []Agent             `json:"agents"`
	CompanyDirectory   *CompanyDirectory   `json:"company_directory_settings"`
	PickupGroups       []PickupGroup       `json:"pickup_groups"`
	SpecialEndpoints   []SpecialEndpoint   `json:"special_endpoints"`

	// ringing is the live state a directed pickup render reads
	// (WithRinging); nil for every other render.
	ringing *ringingAt
	// huntTurn orders a random or round-robin hunt group's members for
	// one call (WithHuntTurn); nil for every other render.
	huntTurn *huntTurn

	// prepared holds the indexes Prepare builds (nil: linear scans).
	prepared *snapIndex
}

// PublicSnapshot is the input for the public context: the DID being called
// and the snapshot of the tenant it belongs to.
type PublicSnapshot struct {
	DID    DID             `json:"did"`
	Tenant *TenantSnapshot `json:"tenant"`
	// CallerContactName is the name of the tenant's contact whose number
	// is calling, when the tenant enables caller name lookup (looked up by
	// the renderer's caller; "" for an unknown caller). Contact data is
	// user data: it is rendered sanitised like a caller's own name.
	CallerContactName string `json:"caller_contact_name,omitempty"`
}

// Options are installation settings every render needs.
type Options struct {
	// Domain is the installation's one SIP domain.
	Domain string
	// SoundsDir is where tenant prompt files live when the nodes mount the
	// media library (<SoundsDir>/<tenant>/<filename>), used when Media has
	// no base. (Phone-recorded prompts are written under MediaDir.)
	SoundsDir string
	// MediaDir is the media library as the nodes mount it; voicemail boxes
	// keep their messages in <MediaDir>/<tenant>/voicemail/<box> ("" or an
	// unsafe path: mod_voicemail's own storage directory).
	MediaDir string
	// Media forms the signed http_cache:// URLs nodes play tenant audio
	// from (voice prompts, music-on-hold chimes).
	Media MediaURLs
	// DefaultTimezone applies when neither schedule nor tenant names a zone.
	DefaultTimezone string
	// UserCacheMS is the cacheable="" value on directory users (0 = 60000).
	UserCacheMS int
	// SIPWSPort is the plain SIP-over-WebSocket port (sofia ws-binding) of
	// every internal profile, where browser phones register (the bundle's
	// sip.websocket_url); 0 renders none. A profile's wss_port adds the TLS
	// binding (wss-binding), which needs the node's wss.pem.
	SIPWSPort int
	// SIPWSSPort is the secure SIP-over-WebSocket port (sofia wss-binding)
	// of every internal profile without a wss_port of its own; 0 renders
	// none.
	SIPWSSPort int
}

// HuntMember is one member of a hunt group, in ring order.
type HuntMember struct {
	Type           string `json:"type"` // extension or external
	Target         string `json:"target"`
	DelaySeconds   int    `json:"delay_seconds"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// HuntGroup rings several phones at once or in turn (resources.md §2.4).
type HuntGroup struct {
	ID                      int64        `json:"id"`
	Name                    string       `json:"name"`
	Number                  string       `json:"number"`
	Strategy                string       `json:"strategy"`
	Members                 []HuntMember `json:"members"`
	RingSeconds             int          `json:"ring_seconds"`
	TimeoutDestination      *Destination `json:"timeout_destination"`
	CallerIDNamePrefix      string       `json:"callerid_name_prefix"`
	Ringback                string       `json:"ringback"`
	RespectMemberForwarding bool         `json:"respect_member_forwarding"`
	ConfirmExternal         bool         `json:"confirm_external"`
	Enabled                 bool         `json:"enabled"`
}

// ConferenceRoom is a tenant's conference bridge (resources.md §2.15). The
// PINs arrive opened by the loader.
type ConferenceRoom struct {
	ID                int64  `json:"id"`
	Name              string `json:"name"`
	Number            string `json:"number"`
	PIN               string `json:"pin"`
	ModeratorPIN      string `json:"moderator_pin"`
	MaxMembers        int    `json:"max_members"`
	WaitForModerator  bool   `json:"wait_for_moderator"`
	MuteOnJoin        bool   `json:"mute_on_join"`
	AnnounceJoinLeave bool   `json:"announce_join_leave"`
	AnnounceCount     bool   `json:"announce_count"`
	// EndWhenModeratorLeaves ends the conference when a moderator (who
	// entered the moderator PIN) leaves.
	EndWhenModeratorLeaves bool `json:"end_when_moderator_leaves"`
	// Record records the conference into the media library.
	Record bool `json:"record"`
	// MOHClassID is the music a lone member hears (0: the tenant's).
	MOHClassID int64  `json:"moh_class_id"`
	Quality    string `json:"quality"`
	Language   string `json:"language"`
	Enabled    bool   `json:"enabled"`
}

// IVROption sends a pressed digit string somewhere.
type IVROption struct {
	Digits      string      `json:"digits"`
	Destination Destination `json:"destination"`
}

// IVRMenu is a voice menu (resources.md §2.13).
type IVRMenu struct {
	ID                    int64  `json:"id"`
	Name                  string `json:"name"`
	Number                string `json:"number"`
	GreetingLongPromptID  int64  `json:"greeting_long_prompt_id"`
	GreetingShortPromptID int64  `json:"greeting_short_prompt_id"`
	InvalidPromptID       int64  `json:"invalid_prompt_id"`
	ExitPromptID          int64  `json:"exit_prompt_id"`
	TimeoutMS             int    `json:"timeout_ms"`
	InterDigitTimeoutMS   int    `json:"inter_digit_timeout_ms"`
	MaxFailures           int    `json:"max_failures"`
	MaxTimeouts           int    `json:"max_timeouts"`
	DigitLen              int    `json:"digit_len"`
	// DirectDial lets callers dial any of the tenant's extensions.
	DirectDial      bool         `json:"direct_dial"`
	Options         []IVROption  `json:"options"`
	ExitDestination *Destination `json:"exit_destination"`
	Language        string       `json:"language"`
	Enabled         bool         `json:"enabled"`
}

// Queue is an ACD queue served by mod_callcenter (resources.md §2.3).
type Queue struct {
	ID                           int64        `json:"id"`
	Name                         string       `json:"name"`
	Number                       string       `json:"number"`
	Strategy                     string       `json:"strategy"`
	GreetingPromptID             int64        `json:"greeting_prompt_id"`
	MOHClassID                   int64        `json:"moh_class_id"`
	AnnouncePromptID             int64        `json:"announce_prompt_id"`
	AnnounceFrequencySeconds     int          `json:"announce_frequency_seconds"`
	Record                       bool         `json:"record"`
	MaxWaitSeconds               int          `json:"max_wait_seconds"`
	MaxWaitNoAgentSeconds        int          `json:"max_wait_no_agent_seconds"`
	MaxWaitNoAgentReachedSeconds int          `json:"max_wait_no_agent_reached_seconds"`
	TierRulesApply               bool         `json:"tier_rules_apply"`
	TierRuleWaitSeconds          int          `json:"tier_rule_wait_seconds"`
	TierRuleWaitMultiplyLevel    bool         `json:"tier_rule_wait_multiply_level"`
	TierRuleNoAgentNoWait        bool         `json:"tier_rule_no_agent_no_wait"`
	DiscardAbandonedAfterSeconds int          `json:"discard_abandoned_after_seconds"`
	AbandonedResumeAllowed       bool         `json:"abandoned_resume_allowed"`
	TimeBaseScore                string       `json:"time_base_score"`
	ExitKey                      string       `json:"exit_key"`
	ExitDestination              *Destination `json:"exit_destination"`
	TimeoutDestination           *Destination `json:"timeout_destination"`
	CallerIDNamePrefix           string       `json:"callerid_name_prefix"`
	Enabled                      bool         `json:"enabled"`
}

// AgentTier is one queue an agent serves (a mod_callcenter tier).
type AgentTier struct {
	QueueID  int64 `json:"queue_id"`
	Level    int   `json:"level"`
	Position int   `json:"position"`
}

// Agent is a dynamic queue agent (resources.md §2.2).
type Agent struct {
	ID                   int64       `json:"id"`
	AgentNumber          string      `json:"agent_number"`
	Extension            string      `json:"extension"`
	ContactType          string      `json:"contact_type"`
	ExternalNumber       string      `json:"external_number"`
	Queues               []AgentTier `json:"queues"`
	Status               string      `json:"status"`
	MaxNoAnswer          int         `json:"max_no_answer"`
	WrapUpSeconds        int         `json:"wrap_up_seconds"`
	RejectDelaySeconds   int         `json:"reject_delay_seconds"`
	BusyDelaySeconds     int         `json:"busy_delay_seconds"`
	NoAnswerDelaySeconds int         `json:"no_answer_delay_seconds"`
	Enabled              bool        `json:"enabled"`
}

// MusicOnHold is a music-on-hold class (resources.md §2.23), streamed by
// mod_local_stream as local_stream://<tenant>_<name>.
type MusicOnHold struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// PickupGroup says who may answer whose ringing phone (resources.md §2.5).
type PickupGroup struct {
	ID      int64    `json:"id"`
	Name    string   `json:"name"`
	Members []string `json:"members"`
	Pickers []string `json:"pickers"`
	Enabled bool     `json:"enabled"`
}

// SpecialEndpoint is a dialable number that rings something other than a
// registered phone (resources.md §2.13).
type SpecialEndpoint struct {
	ID             int64  `json:"id"`
	Name           string `json:"name"`
	Number         string `json:"number"`
	Kind           string `json:"kind"`
	ExternalNumber string `json:"external_number"`
	SIPURI         string `json:"sip_uri"`
	Application    string `json:"application"`
	RingSeconds    int    `json:"ring_seconds"`
	CallerIDPolicy string `json:"callerid_policy"`
	FaxEmail       string `json:"fax_email"`
	Enabled        bool   `json:"enabled"`
}

package models

import (
	"fmt"
	"strings"
)

// Platform organisation and webhook resources (resources.md §1.2, §1.4,
// §1.10, §1.11) and tenant collaboration, messaging and integration
// resources (§3).

const (
	patChatChannel = `^[a-z0-9][a-z0-9._-]{0,63}$`
	// patURL is an http(s) URL without userinfo; https-only outside
	// development mode and the private-range guard are delivery-time checks.
	patURL = `^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\s]*)?$`
)

// tenantEvents are what tenant and platform webhooks subscribe to (§3.5).
var tenantEvents = []string{
	"call.started", "call.created", "call.ringing", "call.answered", "call.bridged", "call.ended",
	"call.recording.started", "call.recording.stopped", "voicemail.left",
	"queue.caller.joined", "queue.caller.answered", "queue.caller.abandoned",
	"agent.status.changed", "extension.registered", "extension.unregistered",
	"message.received", "message.status", "chat.message", "office_mode.changed", "config.changed",
}

// systemEvents are what system webhooks subscribe to (§1.11).
var systemEvents = []string{
	"server.down", "server.up", "esl.disconnected", "esl.connected",
	"trunk.registration_failed", "trunk.registration_recovered", "trunk.capacity_reached",
	"tenant.limit_reached", "api_key.created", "api_key.revoked",
	"administrator.login_failed", "import.completed", "import.failed", "webhook.auto_disabled",
}

// randomSecret32 generates a webhook signing key.
func randomSecret32() string { return randomString(secretAlphabet, 32) }

// webhookFields are the fields of §3.5, shared by every webhook resource;
// each call returns fresh declarations.
func webhookFields(events []string) []*Field {
	return []*Field{
		nameField(),
		{Name: "url", Type: String, Required: true, MaxLen: 1024, Pattern: patURL},
		{Name: "events", Type: StringList, Required: true, MaxItems: len(events), Enum: events},
		{Name: "filter", Type: Object, Doc: "only matching events", Props: []*Field{
			{Name: "extensions", Type: StringList, Pattern: patNumber, MaxItems: 100},
			{Name: "queues", Type: StringList, Pattern: patNumber, MaxItems: 100},
			{Name: "dids", Type: StringList, Pattern: patE164, MaxItems: 100},
			enumField("direction", "", "inbound", "outbound", "internal"),
		}},
		{Name: "secret", Type: String, Secret: Encrypted, Pattern: `^[!-~]{16,128}$`, Generate: randomSecret32, Doc: "HMAC-SHA256 signing key; generated when omitted; returned once"},
		enumField("content_type", "application/json", "application/json", "application/x-www-form-urlencoded"),
		{Name: "headers", Type: Map, Secret: Encrypted, MaxItems: 10, MaxLen: 1024, Doc: "custom request headers; write-only"},
		intField("timeout_ms", 1000, 30000, 5000, ""),
		intField("max_attempts", 1, 10, 8, ""),
		enabledField(),
		{Name: "disabled_reason", Type: String, ReadOnly: true, Doc: "set when auto-disabled"},
		{Name: "consecutive_failures", Type: Int, ReadOnly: true},
		{Name: "last_success_at", Type: Time, ReadOnly: true},
		{Name: "last_failure_at", Type: Time, ReadOnly: true},
		descriptionField(),
	}
}

var enterprisesResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "enterprises", Title: "enterprise", Scope: Platform, Table: "enterprises", Order: "name",
	Hooks: rules{checks: []check{uniqueItems("sites", "tenant"), uniqueItems("sites", "site_code")}},
	Fields: []*Field{
		nameField(),
		{Name: "sites", Type: ObjectList, MaxItems: 100, Doc: "each tenant is one site", Props: []*Field{
			{Name: "tenant", Type: String, Required: true, Pattern: patTenant},
			{Name: "site_code", Type: String, Required: true, Pattern: `^[0-9]{1,4}$`},
		}},
		{Name: "intersite_prefix", Type: String, Pattern: `^[0-9*]{0,2}$`, Default: "8", Doc: "dialled before the site code"},
		boolField("intersite_dialing", true, ""),
		boolField("shared_directory", true, "directories include other sites"),
		descriptionField(),
	},
}

// brandingFields are the branding singleton's fields; a reseller's
// branding object repeats them with smaller images (it is one JSON column).
func brandingFields(logoMax, faviconMax int) []*Field {
	return []*Field{
		{Name: "product_name", Type: String, MaxLen: 64},
		{Name: "logo", Type: String, MaxLen: logoMax, Pattern: `^data:image/(png|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}$`, Doc: "data: URL, PNG or SVG"},
		{Name: "favicon", Type: String, MaxLen: faviconMax, Pattern: `^data:image/(png|svg\+xml|x-icon);base64,[A-Za-z0-9+/]+={0,2}$`},
		{Name: "primary_color", Type: String, Pattern: patColor},
		{Name: "secondary_color", Type: String, Pattern: patColor},
		{Name: "custom_domain", Type: String, Pattern: patHostname, Doc: "web login host"},
		{Name: "support_email", Type: String, MaxLen: 254, Pattern: patEmail},
		{Name: "support_url", Type: String, MaxLen: 255, Pattern: patURL},
		{Name: "email_from_name", Type: String, MaxLen: 64, Pattern: `^[^"<>\r\n]{0,64}$`, NoExpand: true},
		{Name: "email_from_address", Type: String, MaxLen: 254, Pattern: patEmail},
		{Name: "login_message", Type: String, MaxLen: 500},
	}
}

var resellersResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "resellers", Title: "reseller", Scope: Platform, Table: "resellers", Order: "name",
	Fields: []*Field{
		nameField(),
		{Name: "company", Type: String, MaxLen: 128},
		{Name: "contact_email", Type: String, MaxLen: 254, Pattern: patEmail},
		{Name: "contact_phone", Type: String, Pattern: patDigitsCID},
		intField("max_tenants", 0, 1000000, 0, "0 = unlimited"),
		intField("max_extensions_total", 0, 100000000, 0, "0 = unlimited"),
		intField("max_concurrent_calls_total", 0, 100000000, 0, "0 = unlimited"),
		{Name: "branding", Type: Object, Props: brandingFields(40000, 12000), Doc: "default for its tenants"},
		{Name: "billing_reference", Type: String, MaxLen: 64},
		enabledField(),
		descriptionField(),
	},
}

var webhooksResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "webhooks", Title: "platform webhook", Scope: Platform, Table: "webhooks", Order: "name",
	Fields: append(webhookFields(tenantEvents),
		&Field{Name: "tenants", Type: StringList, Pattern: patTenant, MaxItems: 1000, Doc: "empty = all tenants the owner may see"}),
}

var systemWebhooksResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "system_webhooks", Title: "system webhook", Scope: Platform, Table: "system_webhooks", Order: "name",
	Fields: webhookFields(systemEvents),
}

var chatChannelsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "chat_channels", Title: "chat channel", Scope: TenantScope, Table: "chat_channels", Order: "name",
	Hooks: chatChannelHooks{},
	Fields: []*Field{
		{Name: "name", Type: String, Required: true, MaxLen: 64, Pattern: patChatChannel, Immutable: true, Doc: "the to of a channel message; fixed once created (it names the chat room)"},
		{Name: "display_name", Type: String, MaxLen: 64},
		{Name: "topic", Type: String, MaxLen: 255},
		enumField("visibility", "public", "public", "private"),
		{Name: "members", Type: StringList, Pattern: patNumber, MaxItems: 1000, Ref: "extensions", Doc: "extensions of the tenant, for private channels"},
		boolField("read_only", false, "only administrators, integrations and webhooks post"),
		boolField("archived", false, "archived channels refuse posts"),
		{Name: "jid", Type: String, ReadOnly: true, Doc: "the chat room: <tenant>-<name>@<chat room service>"},
		descriptionField(),
	},
}

var brandingResource = &Resource{
	Name: "branding", Title: "branding", Scope: TenantScope, Table: "branding", Singleton: true,
	Fields: append(brandingFields(700000, 90000), descriptionField()),
}

// messagingDefaults gives a new channel max_body_chars by its type.
func messagingDefaults(old, patch Record) {
	if old != nil {
		return
	}
	if _, ok := patch["max_body_chars"]; !ok {
		patch["max_body_chars"] = int64(1600)
		if patch["type"] == "whatsapp" {
			patch["max_body_chars"] = int64(4096)
		}
	}
}

// MessagingCredentialKeys are the credential keys each provider needs; the
// messaging adapters read exactly these. Providers absent here (vonage,
// http) have no adapter yet, so their channels take any credentials and
// sends through them are refused.
var MessagingCredentialKeys = map[string][]string{
	"twilio":     {"account_sid", "auth_token"},
	"meta_cloud": {"phone_number_id", "access_token", "app_secret", "verify_token"},
	"kannel":     {"sendsms_url", "username", "password", "callback_secret"},
	"smpp":       {"sendsms_url", "username", "password", "callback_secret"},
}

// checkCredentials makes a channel carry the keys its provider needs. The
// stored credentials are sealed, so a provider change must bring new ones.
func checkCredentials(rec, patch Record) error {
	creds, given := patch["credentials"].(map[string]any)
	if !given {
		if _, changed := patch["provider"]; changed {
			return FieldError("credentials", "required when the provider is set or changed")
		}
		return nil
	}
	need := MessagingCredentialKeys[fmt.Sprint(rec["provider"])]
	var missing []string
	for _, k := range need {
		if v, ok := creds[k].(string); !ok || strings.TrimSpace(v) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return FieldError("credentials", "provider %v needs %s", rec["provider"], strings.Join(missing, ", "))
	}
	if sec, ok := creds["callback_secret"].(string); ok && len(sec) < 16 {
		return FieldError("credentials", "callback_secret must be at least 16 characters")
	}
	return nil
}

var messagingChannelsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "messaging_channels", Title: "messaging channel", Scope: TenantScope, Table: "messaging_channels", Order: "name",
	Hooks: messagingChannelHooks{rules{prepare: messagingDefaults, checks: []check{uniqueItems("templates", "template_id"), checkCredentials}}},
	Fields: []*Field{
		nameField(),
		required(enumField("type", "", "sms", "whatsapp")),
		required(enumField("provider", "", "twilio", "meta_cloud", "kannel", "smpp", "vonage", "http")),
		{Name: "sender", Type: String, Pattern: `^(\+[1-9][0-9]{6,14}|[A-Za-z0-9 ]{1,11})$`, Doc: "the guide's from (a reserved word in SQL): E.164 or an alphanumeric SMS sender"},
		{Name: "credentials", Type: Map, Secret: Encrypted, Masked: true, MaxItems: 20, MaxLen: 2048,
			Example: map[string]any{"account_sid": "AC00000000000000000000000000000000", "auth_token": "your Twilio auth token"}, Doc: "provider credentials; write-only, sealed with the server key; reads show each value as ****<last 4>. twilio: account_sid, auth_token; meta_cloud: phone_number_id, access_token, app_secret, verify_token; kannel (and smpp, sent through Kannel): sendsms_url (http or https, on a host the operator allows: SWITCHBOARD_EGRESS_ALLOWED_HOSTS), username, password, callback_secret (≥ 16), optional smsc"},
		boolField("template_only", false, "sends must name an approved template"),
		{Name: "templates", Type: ObjectList, MaxItems: 40, Props: []*Field{
			{Name: "template_id", Type: String, Required: true, Pattern: `^[A-Za-z0-9_.:-]{1,64}$`},
			{Name: "name", Type: String, MaxLen: 64},
			{Name: "language", Type: String, Pattern: patTemplateLanguage, Doc: "the template's language as Meta names it (en_US); en-US is taken too and sent as en_US"},
			{Name: "body", Type: String, Required: true, MaxLen: 1024, Doc: "{{1}}…{{n}} placeholders"},
			intField("variable_count", 0, 20, 0, ""),
			enumField("status", "pending", "approved", "pending", "rejected"),
		}},
		{Name: "default_country", Type: String, Pattern: patCountry},
		{Name: "inbound_destination", Type: Object, Doc: "where replies go", Props: []*Field{
			required(enumField("type", "", "chat_channel", "extension", "webhook")),
			{Name: "target", Type: String, Required: true, MaxLen: 255},
		}},
		optInt("max_body_chars", 1, 4096, "default 1600 for SMS, 4096 for WhatsApp"),
		intField("rate_per_second", 1, 100, 1, "provider throughput"),
		enabledField(),
		descriptionField(),
	},
}

var incomingWebhooksResource = &Resource{
	Name: "incoming_webhooks", Title: "incoming webhook", Scope: TenantScope, Table: "incoming_webhooks",
	WritePermission: "incoming_webhooks.manage",
	OwnPermission:   "incoming_webhooks.manage_own",
	Hooks:           incomingWebhookRules{},
	Fields: []*Field{
		{Name: "channel", Type: String, Required: true, MaxLen: 64, Pattern: patChatChannel, Doc: "a chat channel of the tenant, not archived",
			ExampleOf: [2]string{"chat_channels", "name"}},
		{Name: "name", Type: String, Required: true, MaxLen: 64, Doc: "sender name shown on messages"},
		descriptionField(),
		enabledField(),
		{Name: "picture", Type: String, MaxLen: 1400000, Pattern: `^data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/]+={0,2}$`, ReadPattern: `^https?://.*/chat/avatars/webhooks/[0-9]+/[0-9a-f]{16}\.png$`, Doc: "avatar shown with the webhook's messages: write a data: URL of a PNG, JPEG or GIF (at most 1 MiB), stored as a 256×256 PNG; reads show the URL serving it"},
		{Name: "token", Type: String, ReadOnly: true, Secret: Digest, Generate: newWebhookToken, Doc: "the secret in the URL (32 random bytes); shown only in the create and regenerate answers, stored as SHA-256"},
		{Name: "url", Type: String, ReadOnly: true, MaxLen: 1024, Doc: "{base_url}/integration/webhooks/<token>: in full only in the create and regenerate answers, else with the token's first characters"},
		{Name: "created_by", Type: String, ReadOnly: true},
		{Name: "last_used_at", Type: Time, ReadOnly: true},
		{Name: "message_count", Type: Int, ReadOnly: true},
	},
}

var outboundWebhooksResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "outbound_webhooks", Title: "outbound webhook", Scope: TenantScope, Table: "outbound_webhooks", Order: "name",
	Fields: webhookFields(tenantEvents),
}

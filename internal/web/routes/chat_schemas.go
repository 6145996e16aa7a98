package routes

// chatSchemas are the OpenAPI shapes of chatAPIRoutes and incomingWebhookRoutes.
func chatSchemas() map[string]any {
	str := obj{"type": "string"}
	url := obj{"type": "string", "format": "uri"}
	return map[string]any{
		"ConnectMessage": obj{"type": "object", "required": []string{"to", "body"}, "properties": obj{
			"target":    obj{"type": "string", "enum": []string{"user", "channel"}, "description": `"user" sends a direct message; omitted (or "channel") posts into a channel`},
			"to":        obj{"type": "string", "description": "channel message: the channel name (resolved within the tenant); direct message: the recipient's extension"},
			"body":      obj{"type": "string", "maxLength": maxChatBody},
			"from_name": obj{"type": "string", "maxLength": 64, "description": "channel message: the sender name shown"},
			"body_type": obj{"type": "string", "enum": []string{"JSON"}, "description": "JSON: body must be a valid JSON document (400 otherwise)"},
			"from_ext":  obj{"type": "string", "description": "direct message: the sender's extension (user keys: their own, the default)"},
		}},
		"ConnectMessageSent": obj{"type": "object", "required": []string{"status", "jid"}, "properties": obj{
			"status":  obj{"type": "string", "enum": []string{"sent"}},
			"channel": obj{"type": "string", "description": "channel messages: the channel name"},
			"jid":     obj{"type": "string", "description": "the channel's room JID, or the recipient's JID"},
			"to":      obj{"type": "string", "description": "direct messages: the recipient's extension"},
			"target":  obj{"type": "string", "enum": []string{"user"}},
			"from":    obj{"type": "string", "description": "direct messages: the sender's chat JID"},
		}},
		"AgentProvision": obj{"type": "object", "required": []string{"extension"}, "properties": obj{
			"extension":     obj{"type": "string", "pattern": `^[0-9]{2,10}$`, "description": "created as type ai_agent when missing"},
			"first_name":    str,
			"last_name":     str,
			"chat_password": obj{"type": "string", "pattern": `^[!-~]{12,128}$`, "description": "generated when omitted"},
			"sip_password":  obj{"type": "string", "description": "the extension's SIP secret; generated when the extension is created without one"},
		}},
		"WebhookPayload": obj{"type": "object", "description": "Slack's incoming-webhook format, as JSON or in a form field payload", "properties": obj{
			"text":   obj{"type": "string", "maxLength": 40000, "description": "links as <url|text>; Slack's three escapes (&amp; &lt; &gt;)"},
			"mrkdwn": obj{"type": "boolean", "description": "default true: *bold*, _italic_, ~strike~, `code`, ``` blocks and > quotes are rendered; false: the text is literal"},
			"attachments": obj{"type": "array", "maxItems": 20, "items": obj{"type": "object", "properties": obj{
				"fallback": str, "color": str, "pretext": str, "author_name": str, "author_link": url,
				"title": str, "title_link": url, "text": obj{"type": "string", "description": "shown at the bottom of the attachment"},
				"fields": obj{"type": "array", "maxItems": 20, "items": obj{"type": "object", "properties": obj{
					"title": str, "value": str, "short": obj{"type": "boolean"},
				}}},
				"image_url": url, "thumb_url": url, "footer": str, "ts": obj{"oneOf": []obj{{"type": "integer"}, {"type": "string"}}},
				"mrkdwn_in": obj{"type": "array", "items": obj{"type": "string", "enum": []string{"pretext", "text", "fields"}}, "description": "the parts of the attachment whose mrkdwn is rendered (none by default)"},
			}}},
		}},
		"Empty": obj{"type": "object", "additionalProperties": false},
		"ChatClientConfig": obj{"type": "object", "required": []string{"websocket_url", "domain", "muc_domain", "name"}, "properties": obj{
			"websocket_url": obj{"type": "string", "description": "XMPP over WebSocket (SWITCHBOARD_CHAT_WS_URL)"},
			"domain":        obj{"type": "string", "description": "the users' XMPP domain"},
			"muc_domain":    obj{"type": "string", "description": "the rooms' XMPP service"},
			"name":          obj{"type": "string", "description": "what the client is called: the tenant's product name (its reseller's, else SWITCHBOARD_INSTALLATION_NAME)"},
			"branding": obj{"type": "object", "description": "the tenant's branding shown by the client (absent without a tenant or branding)", "properties": obj{
				"primary_color": str, "secondary_color": str, "logo": obj{"type": "string", "description": "data: URL"}, "favicon": obj{"type": "string", "description": "data: URL"},
				"login_message": str, "support_url": str, "support_email": str,
			}},
		}},
		// Exactly the service interface's table: every field, no other.
		"AgentBundle": obj{"type": "object", "additionalProperties": false,
			"required": []string{"status", "tenant", "extension", "connect", "sip", "endpoints"},
			"properties": obj{
				"status":    obj{"type": "string", "enum": []string{"provisioned"}, "description": `"provisioned", on provisioning and on rotate (the same bundle with a new chat password)`},
				"tenant":    str,
				"extension": str,
				"connect": obj{"type": "object", "additionalProperties": false,
					"required": []string{"username", "jid", "domain", "password", "websocket_url", "login_url"},
					"properties": obj{
						"username":      obj{"type": "string", "description": "<tenant>-<extension>: the chat web client's login"},
						"jid":           obj{"type": "string", "description": "<username>@<domain>: the XMPP address an XMPP client logs in with"},
						"domain":        obj{"type": "string", "description": "the XMPP domain (SWITCHBOARD_CHAT_DOMAIN), which the WebSocket URL's host need not be"},
						"password":      obj{"type": "string", "description": "returned only here; stored hashed"},
						"websocket_url": url,
						"login_url":     url,
					}},
				"sip": obj{"type": "object", "additionalProperties": false,
					"required": []string{"extension", "auth_id", "password", "domain", "websocket_url"},
					"properties": obj{
						"extension": str, "auth_id": obj{"type": "string", "description": "<extension>-<tenant>"},
						"password": str, "domain": str, "websocket_url": url,
					}},
				"endpoints": obj{"type": "object", "additionalProperties": false,
					"required": []string{"management", "messaging", "reporting", "media", "connect_ws"},
					"properties": obj{
						"management": url, "messaging": url, "reporting": url, "media": url, "connect_ws": url,
					}},
			}},
	}
}

package models

// apiKeysResource describes API keys for the schema checks and the OpenAPI
// document; its routes are hand-written (keys.go) because the value is shown
// once and DELETE revokes instead of deleting.
var apiKeysResource = &Resource{
	Name: "key", Title: "API key", Scope: Platform, Table: "api_keys", Hooks: customRoutes{},
	Fields: []*Field{
		{Name: "name", Type: String, Required: true, MaxLen: 64},
		{Name: "tenant", Type: String, Pattern: patTenant, Doc: "absent = platform key"},
		{Name: "extension", Type: String, Pattern: patNumber, Doc: "user key acting as that extension; requires tenant"},
		{Name: "permissions", Type: StringList, MaxItems: 20, Enum: Permissions},
		{Name: "key", Type: String, ReadOnly: true, Doc: "the key; in the create response only"},
		{Name: "key_prefix", Type: String, ReadOnly: true},
		{Name: "expires_at", Type: String, Pattern: patRFC3339},
		{Name: "last_used_at", Type: Time, ReadOnly: true},
		{Name: "revoked_at", Type: Time, ReadOnly: true},
		{Name: "created_by", Type: String, ReadOnly: true},
	},
}

// Resources is every configuration resource, in the order the API documents them.
var Resources = []*Resource{
	tenantsResource,
	administratorsResource,
	apiKeysResource,
	locationsResource,
	serversResource,
	sipTrunksResource,
	didsResource,
	extensionsResource,
	emergencyLocationsResource,
	schedulesResource,
	routingConditionsResource,
	inboundRoutesResource,
	outboundRoutesResource,
	featureExtensionsResource,
	officeModeResource,
	// Platform organisation and webhooks.
	enterprisesResource,
	resellersResource,
	webhooksResource,
	systemWebhooksResource,
	// Prompts and hold music come before the resources that reference
	// them, so tenant cloning remaps those references to the copies.
	voicePromptsResource,
	musicOnHoldResource,
	departmentsResource,
	tagsResource,
	agentsResource,
	queuesResource,
	huntGroupsResource,
	pickupGroupsResource,
	ivrMenusResource,
	specialEndpointsResource,
	specialMailboxesResource,
	conferenceRoomsResource,
	companyDirectoryResource,
	companyDirectorySettingsResource,
	devicesResource,
	clickToCallWidgetsResource,
	chatChannelsResource,
	brandingResource,
	messagingChannelsResource,
	incomingWebhooksResource,
	outboundWebhooksResource,
	accountsResource,
	contactsResource,
	leadsResource,
	listsResource,
	customFieldsResource,
	activitiesResource,
	tasksResource,
	campaignsResource,
	dealsResource,
}

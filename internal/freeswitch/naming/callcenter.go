package naming

import "strings"

// Queue and agent names of mod_callcenter are "<number>@<tenant>": tenant
// names never hold '@', and numbers are digits, so a name splits at its
// one '@'.

// QueueName is a queue's mod_callcenter name, "<number>@<tenant>".
func QueueName(tenant, number string) string { return number + "@" + tenant }

// AgentName is an agent's mod_callcenter name, "<agent_number>@<tenant>".
func AgentName(tenant, agentNumber string) string { return agentNumber + "@" + tenant }

// SplitCallcenterName splits "<number>@<tenant>"; ok is false unless both
// parts are valid.
func SplitCallcenterName(name string) (number, tenant string, ok bool) {
	number, tenant, found := strings.Cut(name, "@")
	if !found || !ValidTenant(tenant) || len(number) < 2 || len(number) > 10 || !allIn(number, "0123456789") {
		return "", "", false
	}
	return number, tenant, true
}

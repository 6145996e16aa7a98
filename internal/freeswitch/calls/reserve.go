package calls

import (
	"context"
	"fmt"
)

// ReserveID assigns the channel id of a channel that does not exist yet:
// an originate whose Unique-ID the caller chose (origination_uuid) and
// whose API answer must name the channel before FreeSWITCH sends its first
// event. The first event (or Resync) of node/uuid then gives the channel
// exactly this id. A reservation never used expires after EndedTTL.
func (t *Tracker) ReserveID(ctx context.Context, tenant, tech, name, node, uuid string) (string, error) {
	if tenant != "" && !tenantRe.MatchString(tenant) {
		return "", fmt.Errorf("reserve channel id: invalid tenant %q", tenant)
	}
	if node == "" || uuid == "" {
		return "", fmt.Errorf("reserve channel id: node and uuid are required")
	}
	n, err := t.rdb.Incr(ctx, t.prefix+"chseq:"+tenant).Result()
	if err != nil {
		return "", fmt.Errorf("reserve channel id: %w", err)
	}
	id := FormatID(technologyName(tech), firstName(name), tenant, uint64(n))
	if err := t.rdb.Set(ctx, t.prefix+"chres:"+member(node, uuid), id, t.opts.EndedTTL).Err(); err != nil {
		return "", fmt.Errorf("reserve channel id: %w", err)
	}
	return id, nil
}

// technologyName keeps only letters and digits of a technology ("SIP",
// "Local"), falling back to SIP.
func technologyName(tech string) string {
	out := make([]byte, 0, len(tech))
	for i := 0; i < len(tech); i++ {
		if c := tech[i]; c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return "SIP"
	}
	return string(out)
}

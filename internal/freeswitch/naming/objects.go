package naming

import (
	"strconv"
	"strings"
)

// TenantObjectName is "<tenant>_<id>": the conference and profile name of a
// room, the menu name of an IVR. Both are built from the whitelisted tenant
// and the numeric id only.
func TenantObjectName(tenant string, id int64) string {
	return tenant + "_" + strconv.FormatInt(id, 10)
}

// SplitTenantObjectName splits "<tenant>_<id>" (tenant names may contain '_':
// the split is at the last one).
func SplitTenantObjectName(name string) (tenant string, id int64, ok bool) {
	i := strings.LastIndexByte(name, '_')
	if i < 0 || !ValidTenant(name[:i]) || !allIn(name[i+1:], "0123456789") || len(name)-i-1 > 18 {
		return "", 0, false
	}
	id, err := strconv.ParseInt(name[i+1:], 10, 64)
	return name[:i], id, err == nil && id > 0
}

// MOHStreamName is the mod_local_stream stream a tenant's music-on-hold
// class plays as (local_stream://<tenant>_<name>): also its directory name.
func MOHStreamName(tenant, name string) string { return tenant + "_" + name }

package naming

import "strconv"

// FaxPath is the signed part of a fax upload: <tenant>/<endpoint id>/<call
// uuid>. A node PUTs the fax it received on a call to /fs/fax/<FaxPath>.
func FaxPath(tenant string, endpointID int64, callUUID string) string {
	return tenant + "/" + strconv.FormatInt(endpointID, 10) + "/" + callUUID
}

// ValidCallUUID accepts FreeSWITCH's channel UUIDs: 36 characters of hex
// digits and dashes in the 8-4-4-4-12 shape.
func ValidCallUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

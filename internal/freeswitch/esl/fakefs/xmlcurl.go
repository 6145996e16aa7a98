package fakefs

import "strings"

// FormWith rewrites the named fields of a mod_xml_curl form body (every
// occurrence) and appends those it lacks, encoding values as FreeSWITCH
// does; kv is name, value, name, value... Tests and the benchmark use it to
// turn a captured request into the one a given user, domain or call would
// produce, as a fake mod_xml_curl client.
func FormWith(body []byte, kv ...string) []byte {
	pairs := strings.Split(string(body), "&")
	for i := 0; i+1 < len(kv); i += 2 {
		pair := kv[i] + "="
		if kv[i+1] != "" { // mod_xml_curl sends empty fields empty, not _undef_
			pair += URLEncode(kv[i+1])
		}
		found := false
		for j, p := range pairs {
			if strings.HasPrefix(p, kv[i]+"=") {
				pairs[j] = pair
				found = true
			}
		}
		if !found {
			pairs = append(pairs, pair)
		}
	}
	return []byte(strings.Join(pairs, "&"))
}

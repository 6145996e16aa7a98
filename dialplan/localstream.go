package dialplan

import "strings"

// MOHClass is a tenant's music-on-hold class (resources.md §2.23): a
// mod_local_stream directory <tenant>_<name>, played as
// local_stream://<tenant>_<name>.
type MOHClass struct {
	Tenant  string
	Name    string
	Rate    int
	Shuffle bool
	// ChimeFile is the chime prompt's filename in the tenant's directory.
	ChimeFile      string
	ChimeFrequency int
	ChimeMax       int
	TenantEnabled  bool
}

// MOHStreamName is the stream a class plays as.
func MOHStreamName(tenant, name string) string { return tenant + "_" + name }

// LocalStreamConf renders local_stream.conf: one directory per class of
// every enabled tenant, its files in <mediaDir>/<tenant>/moh/<name> as the
// nodes mount the media library. mod_local_stream reads the whole file at
// load and on "local_stream reload <name>". Classes whose names are not
// safe tokens are left out, as is everything when mediaDir is not a safe
// absolute path. A chime is the prompt's signed media URL when media has a
// base (mod_local_stream opens chimes as any file, so mod_http_cache
// serves them), else its path on the mount. The class's own files stay on
// the mount: mod_local_stream lists a local directory to find them.
func LocalStreamConf(mediaDir string, media MediaURLs, classes []MOHClass) []byte {
	w := newXW(512 + 256*len(classes))
	w.raw(docOpen)
	w.raw("<section name=\"configuration\">\n<configuration name=\"local_stream.conf\" description=\"stream files from local dir\">\n")
	dir := strings.TrimRight(mediaDir, "/")
	if strings.HasPrefix(dir, "/") && validToken(strings.ReplaceAll(dir[1:], "/", "_"), "") {
		for _, c := range classes {
			if !c.TenantEnabled || !validTenant(c.Tenant) || !validToken(c.Name, "") {
				continue
			}
			w.raw("<directory")
			w.attr("name", MOHStreamName(c.Tenant, c.Name))
			w.attr("path", dir+"/"+c.Tenant+"/moh/"+c.Name)
			w.raw(">\n")
			w.param("param", "rate", itoa(clampInt(c.Rate, 8000, 48000, 8000)))
			w.param("param", "shuffle", boolStr(c.Shuffle))
			w.param("param", "channels", "1")
			w.param("param", "interval", "20")
			w.param("param", "timer-name", "soft")
			if c.ChimeFile != "" && validToken(c.ChimeFile, "") && (media.Base == "" || media.URL(c.Tenant, c.ChimeFile) != "") {
				chime := dir + "/" + c.Tenant + "/" + c.ChimeFile
				if media.Base != "" {
					chime = media.URL(c.Tenant, c.ChimeFile)
				}
				w.param("param", "chime-list", chime)
				w.param("param", "chime-freq", itoa(clampInt(c.ChimeFrequency, 1, 3600, 30)))
				w.param("param", "chime-max", itoa(clampInt(c.ChimeMax, 0, 1000, 0)))
			}
			w.raw("</directory>\n")
		}
	}
	w.raw("</configuration>\n")
	closeSection(w)
	return w.bytes()
}

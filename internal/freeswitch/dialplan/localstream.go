package dialplan

import (
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

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

// classMOH is the local_stream:// URL of the tenant's class id, "" when
// the id names no class whose name a stream can carry.
func (s *TenantSnapshot) classMOH(id int64) string {
	if c := s.mohClass(id); c != nil && validTenant(s.Tenant.Tenant) {
		return "local_stream://" + naming.MOHStreamName(s.Tenant.Tenant, c.Name)
	}
	return ""
}

// tenantMOH is the tenant's default hold music, "" for the platform's.
func (s *TenantSnapshot) tenantMOH() string { return s.classMOH(s.Tenant.MOHClassID) }

// holdMusic is what a caller hears while extension e holds the call (the
// hold_music of its channels): its class, else the tenant's, "" for the
// platform's (FreeSWITCH then plays DefaultMOH).
func (s *TenantSnapshot) holdMusic(e *Extension) string {
	return firstNonEmpty(s.classMOH(e.MOHClassID), s.tenantMOH())
}

// DefaultMOH is the platform's hold music: what FreeSWITCH plays when a
// channel has no hold_music, and what queues, conference rooms and
// tenants without a class of their own play.
const DefaultMOH = "local_stream://moh"

// defaultMOHRates are the sample rates the default stream is offered at,
// as FreeSWITCH's vanilla local_stream.conf does (moh/8000, moh/16000 in
// <dir>/8000 and <dir>/16000). mod_local_stream opens local_stream://moh
// as "moh/<channel rate>" first, then "moh" (8000 Hz), for any other rate.
var defaultMOHRates = []int{8000, 16000}

// SafeNodePath reports whether dir is an absolute path of safe tokens
// (letters, digits, '.', '_', '-' between slashes; no segment starting
// with '.'), the only kind rendered as a node directory.
func SafeNodePath(dir string) bool {
	dir = strings.TrimRight(dir, "/")
	if !strings.HasPrefix(dir, "/") {
		return false
	}
	for _, seg := range strings.Split(dir[1:], "/") {
		if !validToken(seg, "") {
			return false
		}
	}
	return true
}

// LocalStreamConf renders local_stream.conf: the platform's default stream
// "moh" (DefaultMOH) from defaultDir (<defaultDir>/8000 and /16000, as
// FreeSWITCH's music packages install them; none when defaultDir is not a
// safe absolute path), then one directory per class of every enabled
// tenant, its files in <mediaDir>/<tenant>/moh/<name> as the nodes mount
// the media library. mod_local_stream reads the whole file at
// load and on "local_stream reload <name>". Classes whose names are not
// safe tokens are left out, as is everything when mediaDir is not a safe
// absolute path. A chime is the prompt's signed media URL when media has a
// base (mod_local_stream opens chimes as any file, so mod_http_cache
// serves them), else its path on the mount. The class's own files stay on
// the mount: mod_local_stream lists a local directory to find them.
func LocalStreamConf(mediaDir, defaultDir string, media MediaURLs, classes []MOHClass) []byte {
	w := xmldoc.NewWriter(1024 + 256*len(classes))
	w.Raw(xmldoc.DocOpen)
	w.Raw("<section name=\"configuration\">\n<configuration name=\"local_stream.conf\" description=\"stream files from local dir\">\n")
	if SafeNodePath(defaultDir) {
		def := strings.TrimRight(defaultDir, "/")
		for _, rate := range defaultMOHRates {
			writeStream(w, "moh/"+itoa(rate), def+"/"+itoa(rate), rate, true)
			w.Raw("</directory>\n")
		}
		writeStream(w, "moh", def+"/"+itoa(defaultMOHRates[0]), defaultMOHRates[0], true)
		w.Raw("</directory>\n")
	}
	dir := strings.TrimRight(mediaDir, "/")
	if strings.HasPrefix(dir, "/") && validToken(strings.ReplaceAll(dir[1:], "/", "_"), "") {
		for _, c := range classes {
			if !c.TenantEnabled || !validTenant(c.Tenant) || !validToken(c.Name, "") {
				continue
			}
			writeStream(w, naming.MOHStreamName(c.Tenant, c.Name), dir+"/"+c.Tenant+"/moh/"+c.Name, clampInt(c.Rate, 8000, 48000, 8000), c.Shuffle)
			if c.ChimeFile != "" && validToken(c.ChimeFile, "") && (media.Base == "" || media.URL(c.Tenant, c.ChimeFile) != "") {
				chime := dir + "/" + c.Tenant + "/" + c.ChimeFile
				if media.Base != "" {
					chime = media.URL(c.Tenant, c.ChimeFile)
				}
				w.Param("param", "chime-list", chime)
				w.Param("param", "chime-freq", itoa(clampInt(c.ChimeFrequency, 1, 3600, 30)))
				w.Param("param", "chime-max", itoa(clampInt(c.ChimeMax, 0, 1000, 0)))
			}
			w.Raw("</directory>\n")
		}
	}
	w.Raw("</configuration>\n")
	xmldoc.CloseSection(w)
	return w.Bytes()
}

// writeStream opens one <directory> with its common params; the caller
// adds chimes and closes it.
func writeStream(w *xmldoc.Writer, name, path string, rate int, shuffle bool) {
	w.Raw("<directory")
	w.Attr("name", name)
	w.Attr("path", path)
	w.Raw(">\n")
	w.Param("param", "rate", itoa(rate))
	w.Param("param", "shuffle", boolStr(shuffle))
	w.Param("param", "channels", "1")
	w.Param("param", "interval", "20")
	w.Param("param", "timer-name", "soft")
}

package dialplan

import (
	"github.com/switchboard/switchboard/internal/freeswitch/naming"

	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// Dial-by-name (mod_directory, resources.md §2.16).
//
// mod_directory reads the names it searches from a *domain-only* directory
// fetch that carries no channel data, so with every tenant in one SIP
// domain that fetch could not say whose names are wanted. Each tenant's
// directory application is therefore pointed at a domain of its own,
// naming.DirectoryDomain(tenant) under the reserved ".invalid" top-level domain
// (RFC 2606: never a real host, so no SIP request can name it). Its answer
// lists the tenant's listed extensions and nothing secret (no password, no
// hash), and a user lookup in it finds nothing: nobody can register to it.
//
// mod_directory keeps a profile once loaded until the module reloads, so
// the tenant's settings are not put in a per-tenant profile: the search
// order goes in the directory_search_order channel variable and the minimum
// digits choose one of ten fixed profiles, so a settings change applies to
// the next call.

// directoryProfile is the fixed profile for a minimum number of digits.
func directoryProfile(minDigits int) string {
	return "min-digits-" + itoa(clampInt(minDigits, 1, 10, 3))
}

// DirectoryConf renders directory.conf: the ten fixed profiles (one per
// minimum number of search digits). mod_directory fetches it with no
// request data.
func DirectoryConf() []byte {
	w := xmldoc.NewWriter(4096)
	w.Raw(xmldoc.DocOpen)
	w.Raw("<section name=\"configuration\">\n<configuration name=\"directory.conf\" description=\"Directory\">\n<settings>\n</settings>\n<profiles>\n")
	for n := 1; n <= 10; n++ {
		w.Raw("<profile")
		w.Attr("name", directoryProfile(n))
		w.Raw(">\n")
		w.Param("param", "min-search-digits", itoa(n))
		for _, p := range [][2]string{
			{"max-menu-attempts", "3"},
			{"max-result", "5"},
			{"digit-timeout", "3000"},
			{"next-key", "6"},
			{"prev-key", "4"},
			{"switch-order-key", "*"},
			{"select-name-key", "1"},
			{"new-search-key", "3"},
			{"terminator-key", "#"},
			{"search-order", "last_name"},
			// Transfer to the extension number (the user's number-alias
			// in the directory domain), not to the user id.
			{"use-number-alias", "true"},
		} {
			w.Param("param", p[0], p[1])
		}
		w.Raw("</profile>\n")
	}
	w.Raw("</profiles>\n</configuration>\n")
	xmldoc.CloseSection(w)
	return w.Bytes()
}

// searchOrder maps the guide's search_by to mod_directory's order names.
func searchOrder(by string) string {
	switch by {
	case "first_name":
		return "first_name"
	case "both":
		return "first_and_last_name"
	}
	return "last_name"
}

// companyDirectoryActions runs dial-by-name in the tenant's context: a
// chosen name transfers to its extension number here.
func (p *planner) companyDirectoryActions(cd *CompanyDirectory) []action {
	return []action{
		act("answer", ""),
		set("directory_search_order", searchOrder(cd.SearchBy)),
		act("directory", directoryProfile(cd.MinSearchDigits)+" "+naming.DirectoryDomain(p.tenant)+" "+p.tenant),
	}
}

// directoryDomain renders the dial-by-name domain of snap's tenant: one
// group named after the tenant with every enabled extension listed by name
// (directory_visible), each a user with its number as number-alias, the
// visibility params and its full name. Nothing else of the user is sent.
func directoryDomain(snap *TenantSnapshot) []byte {
	t := snap.Tenant.Tenant
	announce := snap.CompanyDirectory == nil || snap.CompanyDirectory.AnnounceExtension
	w := xmldoc.NewWriter(256 + 256*snap.ExtensionCount())
	xmldoc.OpenSection(w, "directory")
	w.Raw("<domain")
	w.Attr("name", naming.DirectoryDomain(t))
	w.Raw(">\n<groups>\n<group")
	w.Attr("name", t)
	w.Raw(">\n<users>\n")
	for e := range snap.eachExtension() {
		name := sanitizeName(e.FirstName + " " + e.LastName)
		if !e.Enabled || !e.DirectoryVisible || !validNumber(e.Name) || name == "" {
			continue
		}
		w.Raw("<user")
		w.Attr("id", naming.UserID(t, e.Name))
		w.Attr("number-alias", e.Name)
		w.Raw(">\n<params>\n")
		w.Param("param", "directory-visible", "true")
		w.Param("param", "directory-exten-visible", boolStr(announce && e.DirectoryExtensionVisible))
		w.Raw("</params>\n<variables>\n")
		w.Param("variable", "directory_full_name", name)
		w.Raw("</variables>\n</user>\n")
	}
	w.Raw("</users>\n</group>\n</groups>\n</domain>\n")
	xmldoc.CloseSection(w)
	return w.Bytes()
}

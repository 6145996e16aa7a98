package dialplan

import "github.com/switchboard/switchboard/internal/freeswitch/naming"

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
	w := newXW(4096)
	w.raw(docOpen)
	w.raw("<section name=\"configuration\">\n<configuration name=\"directory.conf\" description=\"Directory\">\n<settings>\n</settings>\n<profiles>\n")
	for n := 1; n <= 10; n++ {
		w.raw("<profile")
		w.attr("name", directoryProfile(n))
		w.raw(">\n")
		w.param("param", "min-search-digits", itoa(n))
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
			w.param("param", p[0], p[1])
		}
		w.raw("</profile>\n")
	}
	w.raw("</profiles>\n</configuration>\n")
	closeSection(w)
	return w.bytes()
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
	w := newXW(256 + 256*len(snap.Extensions))
	openSection(w, "directory")
	w.raw("<domain")
	w.attr("name", naming.DirectoryDomain(t))
	w.raw(">\n<groups>\n<group")
	w.attr("name", t)
	w.raw(">\n<users>\n")
	for i := range snap.Extensions {
		e := &snap.Extensions[i]
		name := sanitizeName(e.FirstName + " " + e.LastName)
		if !e.Enabled || !e.DirectoryVisible || !validNumber(e.Name) || name == "" {
			continue
		}
		w.raw("<user")
		w.attr("id", naming.UserID(t, e.Name))
		w.attr("number-alias", e.Name)
		w.raw(">\n<params>\n")
		w.param("param", "directory-visible", "true")
		w.param("param", "directory-exten-visible", boolStr(announce && e.DirectoryExtensionVisible))
		w.raw("</params>\n<variables>\n")
		w.param("variable", "directory_full_name", name)
		w.raw("</variables>\n</user>\n")
	}
	w.raw("</users>\n</group>\n</groups>\n</domain>\n")
	closeSection(w)
	return w.bytes()
}

package dialplan

const (
	docOpen  = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<document type=\"freeswitch/xml\">\n"
	docClose = "</document>\n"
)

// notFoundDoc is the exact "not found" document of freeswitch.md §2.1.
const notFoundDoc = `<document type="freeswitch/xml">
  <section name="result">
    <result status="not found"/>
  </section>
</document>
`

// NotFound returns the document FreeSWITCH reads as "no answer here": it
// then tries the next binding and finally its static files. The slice is new
// on every call, so callers may keep or modify it.
func NotFound() []byte { return []byte(notFoundDoc) }

// IsNotFound reports whether doc is the not-found document, so callers can
// decide, for example, not to cache it.
func IsNotFound(doc []byte) bool { return string(doc) == notFoundDoc }

// openSection starts a document with one section.
func openSection(w *xw, name string) {
	w.raw(docOpen)
	w.raw("<section")
	w.attr("name", name)
	w.raw(">\n")
}

func closeSection(w *xw) {
	w.raw("</section>\n")
	w.raw(docClose)
}

package xmldoc

// DocOpen starts every document; DocClose ends it.
const (
	DocOpen  = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<document type=\"freeswitch/xml\">\n"
	DocClose = "</document>\n"
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

// OpenSection starts a document with one section.
func OpenSection(w *Writer, name string) {
	w.Raw(DocOpen)
	w.Raw("<section")
	w.Attr("name", name)
	w.Raw(">\n")
}

// CloseSection ends the section and the document OpenSection started.
func CloseSection(w *Writer) {
	w.Raw("</section>\n")
	w.Raw(DocClose)
}

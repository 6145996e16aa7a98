package chat

import (
	"strings"
	"testing"
)

func TestRenderTextLinksAndEscapes(t *testing.T) {
	cases := []struct{ in, plain, html string }{
		{"see <https://a.example/x?y=1&amp;z=2|the docs>", "see the docs (https://a.example/x?y=1&z=2)", `see <a href="https://a.example/x?y=1&amp;z=2">the docs</a>`},
		{"bare <https://a.example>", "bare https://a.example", `bare <a href="https://a.example">https://a.example</a>`},
		{"<javascript:alert(1)|click>", "click (javascript:alert(1))", "click (javascript:alert(1))"},
		{"hi <@U123> in <#C9|ops> <!here>", "hi @U123 in #ops @here", "hi @U123 in #ops @here"},
		{"1 &lt; 2 &amp;&amp; <b>", "1 < 2 && b", "1 &lt; 2 &amp;&amp; b"},
		{"mail <mailto:a@b.example|me>", "mail me (mailto:a@b.example)", `mail <a href="mailto:a@b.example">me</a>`},
	}
	for _, c := range cases {
		p, h := renderText(c.in)
		if p != c.plain || h != c.html {
			t.Errorf("renderText(%q) = %q, %q; want %q, %q", c.in, p, h, c.plain, c.html)
		}
	}
}

func TestParsePayloadRules(t *testing.T) {
	cases := map[string]string{
		`{"text":"x"}`:                       "",
		`{"attachments":[{"fallback":"f"}]}`: "",
		`{"text":"x","attachments":"nope"}`:  "invalid_payload",
		`{"text":5}`:                         "invalid_payload",
		`[1]`:                                "invalid_payload",
		`{"text":" "}`:                       "no_text",
		`{"attachments":[{"color":"good"}]}`: "no_text",
		`{"text":"x","attachments":[` + strings.Repeat(`{"text":"a"},`, 20) + `{"text":"a"}]}`: "too_many_attachments",
		`{"text":"` + strings.Repeat("a", 40001) + `"}`:                                        "msg_too_long",
	}
	for in, want := range cases {
		_, err := ParsePayload([]byte(in))
		pe, _ := IsPayloadError(err)
		got := ""
		if pe != nil {
			got = pe.Code
		}
		if got != want {
			t.Errorf("ParsePayload(%.60q) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderAttachmentsOrderAndRule(t *testing.T) {
	p, err := ParsePayload([]byte(`{"text":"head","attachments":[{"pretext":"pre","title":"T1","title_link":"https://t.example","fields":[{"title":"F","value":"V"}],"text":"bottom"},{"fallback":"only fallback"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := Render(p)
	want := "head\n" + horizontalRule + "\npre\n*T1* (https://t.example)\n*F*\nV\nbottom\n" + horizontalRule + "\nonly fallback"
	if r.Body != want {
		t.Fatalf("body:\n%s\nwant:\n%s", r.Body, want)
	}
	if !strings.Contains(r.HTML, `<a href="https://t.example"><strong>T1</strong></a>`) || strings.Count(r.HTML, horizontalRule) != 2 {
		t.Fatalf("html %s", r.HTML)
	}
	if strings.ContainsRune(Render(&Payload{Text: "bell\x07"}).HTML, '\x07') {
		t.Fatal("control character reached the XHTML part")
	}
}

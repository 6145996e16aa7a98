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
		p, h := renderText(c.in, false)
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

// TestMrkdwn: with mrkdwn on (the default for text) Slack's markup is
// rendered into the XHTML part and left in the plain body (XMPP message
// styling); mrkdwn false keeps the text literal and marks the message
// unstyled; in attachments only the parts named in mrkdwn_in are styled.
func TestMrkdwn(t *testing.T) {
	cases := []struct{ in, html string }{
		{"*deploy* _done_ ~late~ `x*y*`", "<strong>deploy</strong> <em>done</em> <del>late</del> <code>x*y*</code>"},
		{"2*3*4 and snake_case_name stay", "2*3*4 and snake_case_name stay"},
		{"&gt; quoted *bold*\nnext", "<blockquote>quoted <strong>bold</strong></blockquote><br/>next"},
		{"```\nfn(*a*) &lt;b&gt;\n```", "<pre>fn(*a*) &lt;b&gt;</pre>"},
		{"see <https://x.example/a_b_c|*the* docs> *now*", `see <a href="https://x.example/a_b_c">*the* docs</a> <strong>now</strong>`},
	}
	for _, c := range cases {
		plain, h := renderText(c.in, true)
		if h != c.html {
			t.Errorf("renderText(%q, markup) html %q, want %q", c.in, h, c.html)
		}
		if lit, _ := renderText(c.in, false); lit != plain {
			t.Errorf("plain body of %q depends on markup: %q vs %q", c.in, plain, lit)
		}
	}

	on, err := ParsePayload([]byte(`{"text":"*bold*"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := Render(on); r.Unstyled || r.Body != "*bold*" || !strings.Contains(r.HTML, "<strong>bold</strong>") {
		t.Fatalf("default mrkdwn: %+v", r)
	}
	off, _ := ParsePayload([]byte(`{"text":"*bold*","mrkdwn":false}`))
	if r := Render(off); !r.Unstyled || r.Body != "*bold*" || strings.Contains(r.HTML, "<strong>") {
		t.Fatalf("mrkdwn false: %+v", r)
	}
	id, stanza := renderStanza(ChannelMessage{Room: "r", Body: "*bold*", Unstyled: true})
	if id == "" || !strings.Contains(stanza, `<unstyled xmlns="urn:xmpp:styling:0"/>`) {
		t.Fatalf("unstyled stanza %s", stanza)
	}

	att, _ := ParsePayload([]byte(`{"attachments":[{"pretext":"*p*","text":"*t*","fields":[{"title":"F","value":"*v*"}],"mrkdwn_in":["text"]}]}`))
	h := Render(att).HTML
	if !strings.Contains(h, "<strong>t</strong>") || strings.Contains(h, "<strong>p</strong>") || strings.Contains(h, "<strong>v</strong>") {
		t.Fatalf("mrkdwn_in [text] styled %s", h)
	}
	att, _ = ParsePayload([]byte(`{"attachments":[{"pretext":"*p*","text":"*t*"}]}`))
	if h := Render(att).HTML; strings.Contains(h, "<strong>t</strong>") || strings.Contains(h, "<strong>p</strong>") {
		t.Fatalf("attachment without mrkdwn_in styled %s", h)
	}
}

// Issue 27, item 4: Slack's own client posting blocks only (no text) got
// 400 no_text where Slack accepts it; the post is rendered from the
// blocks' text.
func TestBlockOnlyPayload(t *testing.T) {
	raw := []byte(`{"blocks":[
		{"type":"header","text":{"type":"plain_text","text":"Deploy finished"}},
		{"type":"section","text":{"type":"mrkdwn","text":"*api* is live"},"fields":[{"type":"mrkdwn","text":"_env_: prod"}]},
		{"type":"divider"},
		{"type":"image","image_url":"https://example.net/x.png","alt_text":"chart"},
		{"type":"context","elements":[{"type":"mrkdwn","text":"by ci"}]},
		{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"see "},{"type":"link","url":"https://example.net/run/1"}]}]}
	]}`)
	p, err := ParsePayload(raw)
	if err != nil {
		t.Fatalf("block-only payload refused: %v", err)
	}
	want := "Deploy finished\n*api* is live\n_env_: prod\n" + horizontalRule + "\nby ci\nsee https://example.net/run/1"
	if p.Text != want {
		t.Errorf("text from blocks:\n%q\nwant\n%q", p.Text, want)
	}
	if r := Render(p); !strings.Contains(r.HTML, "<strong>api</strong>") || !strings.Contains(r.Body, "Deploy finished") {
		t.Errorf("rendered %+v", r)
	}
	// Blocks with nothing to read are still nothing to post.
	for _, empty := range []string{`{"blocks":[]}`, `{"blocks":[{"type":"divider"}]}`, `{"blocks":[{"type":"image","image_url":"https://example.net/x.png"}]}`} {
		if _, err := ParsePayload([]byte(empty)); err == nil {
			t.Errorf("%s accepted", empty)
		} else if pe, _ := IsPayloadError(err); pe == nil || pe.Code != "no_text" {
			t.Errorf("%s: %v, want no_text", empty, err)
		}
	}
}

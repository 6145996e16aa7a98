package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Slack-compatible incoming-webhook payloads (resources.md §6): parsing,
// the limits of §6.3, and rendering into a chat message. Slack's mrkdwn
// (*bold*, _italic_, ~strike~, `code`, ``` blocks, > quotes) is the same
// markup as XMPP message styling (XEP-0393), so the plain body keeps it and
// chat clients style it; the XHTML-IM rendering carries it as <strong>,
// <em>, <del>, <code>, <pre> and <blockquote>, with links and bold titles.
// "mrkdwn": false makes the text literal (no markup in the XHTML part, and
// XEP-0393's <unstyled/> hint on the message); in attachments markup
// applies only to the parts named in mrkdwn_in ("pretext", "text",
// "fields"), as in Slack.

// Payload is an incoming-webhook message.
type Payload struct {
	Text        string       `json:"text"`
	Mrkdwn      *bool        `json:"mrkdwn"`
	Attachments []Attachment `json:"attachments"`
	// Blocks are Block Kit blocks. Slack shows them instead of text
	// (which is then the notification's fallback); a post of blocks
	// alone is rendered from the blocks' text (BlockText).
	Blocks []any `json:"blocks"`
}

// maxBlocks is Slack's limit on a message's blocks.
const maxBlocks = 50

// BlockText is the text of Block Kit blocks as one mrkdwn text: a line
// per text object (section and header text, section fields, context
// elements) and per rich-text section (its text and link elements run
// together); dividers become a rule. Images and interactive elements
// carry nothing to read and are left out.
func BlockText(blocks []any) string {
	var lines []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, c := range v {
				walk(c)
			}
		case map[string]any:
			typ, _ := v["type"].(string)
			switch typ {
			case "plain_text", "mrkdwn":
				if t, _ := v["text"].(string); strings.TrimSpace(t) != "" {
					lines = append(lines, t)
				}
				return
			case "divider":
				lines = append(lines, horizontalRule)
				return
			case "rich_text_section", "rich_text_quote", "rich_text_preformatted":
				var b strings.Builder
				for _, e := range asList(v["elements"]) {
					el, _ := e.(map[string]any)
					switch el["type"] {
					case "text", "emoji":
						t, _ := el["text"].(string)
						b.WriteString(t)
					case "link":
						t, _ := el["text"].(string)
						if t == "" {
							t, _ = el["url"].(string)
						}
						b.WriteString(t)
					}
				}
				if strings.TrimSpace(b.String()) != "" {
					lines = append(lines, b.String())
				}
				return
			case "image", "actions", "input", "button":
				return
			}
			for _, k := range []string{"text", "fields", "elements"} {
				if c, ok := v[k]; ok {
					walk(c)
				}
			}
		}
	}
	walk(blocks)
	// A rule separates what there is to read; alone or at an end it says
	// nothing.
	for len(lines) > 0 && lines[0] == horizontalRule {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == horizontalRule {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

func asList(v any) []any { l, _ := v.([]any); return l }

// Attachment is Slack's legacy attachment.
type Attachment struct {
	Fallback   string            `json:"fallback"`
	Color      string            `json:"color"`
	Pretext    string            `json:"pretext"`
	AuthorName string            `json:"author_name"`
	AuthorLink string            `json:"author_link"`
	Title      string            `json:"title"`
	TitleLink  string            `json:"title_link"`
	Text       string            `json:"text"`
	Fields     []AttachmentField `json:"fields"`
	ImageURL   string            `json:"image_url"`
	ThumbURL   string            `json:"thumb_url"`
	Footer     string            `json:"footer"`
	TS         json.Number       `json:"ts"`
	MrkdwnIn   []string          `json:"mrkdwn_in"`
}

// markup reports whether the attachment's part (pretext, text, fields)
// takes mrkdwn.
func (a *Attachment) markup(part string) bool {
	for _, p := range a.MrkdwnIn {
		if p == part {
			return true
		}
	}
	return false
}

// AttachmentField is one {title, value, short} of an attachment.
type AttachmentField struct {
	Title string `json:"title"`
	Value string `json:"value"`
	Short bool   `json:"short"`
}

// PayloadError carries Slack's error code for a refused payload.
type PayloadError struct{ Code, Msg string }

func (e *PayloadError) Error() string { return e.Code + ": " + e.Msg }

// Limits of §6.3.
const (
	maxAttachments = 20
	maxFields      = 20
	maxText        = 40000
)

// ParsePayload decodes and checks a payload's JSON.
func ParsePayload(raw []byte) (*Payload, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, &PayloadError{"invalid_payload", "the payload is not a JSON object"}
	}
	if a, ok := probe["attachments"]; ok && !bytes.Equal(bytes.TrimSpace(a), []byte("null")) && !bytes.HasPrefix(bytes.TrimSpace(a), []byte("[")) {
		return nil, &PayloadError{"invalid_payload", "attachments must be an array"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var p Payload
	if err := dec.Decode(&p); err != nil {
		return nil, &PayloadError{"invalid_payload", "the payload does not match the incoming-webhook format"}
	}
	if len(p.Blocks) > maxBlocks {
		return nil, &PayloadError{"invalid_blocks", fmt.Sprintf("at most %d blocks", maxBlocks)}
	}
	if strings.TrimSpace(p.Text) == "" && len(p.Blocks) > 0 {
		p.Text = BlockText(p.Blocks)
	}
	if len(p.Attachments) > maxAttachments {
		return nil, &PayloadError{"too_many_attachments", fmt.Sprintf("at most %d attachments", maxAttachments)}
	}
	show := strings.TrimSpace(p.Text) != ""
	for _, a := range p.Attachments {
		if len(a.Fields) > maxFields {
			return nil, &PayloadError{"too_many_attachments", fmt.Sprintf("at most %d fields per attachment", maxFields)}
		}
		show = show || a.Text != "" || a.Fallback != "" || a.Title != "" || a.Pretext != "" || len(a.Fields) > 0
	}
	if utf8.RuneCountInString(p.Text) > maxText {
		return nil, &PayloadError{"msg_too_long", fmt.Sprintf("text is limited to %d characters", maxText)}
	}
	if !show {
		return nil, &PayloadError{"no_text", "nothing to post: give text, blocks with text or an attachment with content"}
	}
	return &p, nil
}

// IsPayloadError extracts a payload error.
func IsPayloadError(err error) (*PayloadError, bool) {
	var pe *PayloadError
	ok := errors.As(err, &pe)
	return pe, ok
}

// Rendered is a payload as a chat message: a plain body every client
// shows, and an XHTML-IM body (well-formed, escaped).
type Rendered struct {
	Body, HTML string
	// Unstyled: the payload turned mrkdwn off; its body is literal text.
	Unstyled bool
}

// horizontalRule separates attachments in the plain body (the seed's
// "horizontal line").
const horizontalRule = "────────────"

// Render turns a payload into the message posted in the channel: the text,
// then each attachment after a horizontal line with, in order, pretext,
// author, title, fields (title in bold, then value), text at the bottom,
// footer.
func Render(p *Payload) Rendered {
	var plain []string
	var htm []string
	styled := p.Mrkdwn == nil || *p.Mrkdwn
	if strings.TrimSpace(p.Text) != "" {
		t, h := renderText(p.Text, styled)
		plain = append(plain, t)
		htm = append(htm, "<p>"+h+"</p>")
	}
	for _, a := range p.Attachments {
		if len(plain) > 0 {
			plain = append(plain, horizontalRule)
			htm = append(htm, "<p>"+horizontalRule+"</p>")
		}
		var ap, ah []string
		add := func(text, h string) { ap, ah = append(ap, text), append(ah, h) }
		if a.Pretext != "" {
			t, h := renderText(a.Pretext, a.markup("pretext"))
			add(t, h)
		}
		if a.AuthorName != "" {
			add(unescapeSlack(a.AuthorName), html.EscapeString(unescapeSlack(a.AuthorName)))
		}
		if a.Title != "" {
			title := unescapeSlack(a.Title)
			t, h := "*"+title+"*", "<strong>"+html.EscapeString(title)+"</strong>"
			if safeURL(a.TitleLink) {
				t += " (" + a.TitleLink + ")"
				h = `<a href="` + html.EscapeString(a.TitleLink) + `">` + h + "</a>"
			}
			add(t, h)
		}
		for _, f := range a.Fields {
			ft := unescapeSlack(f.Title)
			vt, vh := renderText(f.Value, a.markup("fields"))
			add("*"+ft+"*\n"+vt, "<strong>"+html.EscapeString(ft)+"</strong><br/>"+vh)
		}
		if a.Text != "" {
			t, h := renderText(a.Text, a.markup("text"))
			add(t, h)
		}
		if len(ap) == 0 && a.Fallback != "" {
			add(unescapeSlack(a.Fallback), html.EscapeString(unescapeSlack(a.Fallback)))
		}
		for _, u := range []string{a.ImageURL, a.ThumbURL} {
			if safeURL(u) {
				add(u, `<a href="`+html.EscapeString(u)+`">`+html.EscapeString(u)+"</a>")
			}
		}
		if a.Footer != "" {
			add(unescapeSlack(a.Footer), html.EscapeString(unescapeSlack(a.Footer)))
		}
		plain = append(plain, strings.Join(ap, "\n"))
		htm = append(htm, "<p>"+strings.Join(ah, "<br/>")+"</p>")
	}
	return Rendered{Body: strings.Join(plain, "\n"), HTML: strings.Map(xmlChar, strings.Join(htm, "")), Unstyled: !styled}
}

// slackToken matches <...> link and mention tokens.
var slackToken = regexp.MustCompile(`<([^<>|]*)(?:\|([^<>]*))?>`)

// renderText renders Slack text: links and mentions first, then the three
// escapes are undone; links only for http, https, mailto, tel and sip.
// With markup, the text between links carries mrkdwn into the XHTML part.
func renderText(s string, markup bool) (plain, htm string) {
	htmlText := htmlText
	if markup {
		htmlText = mrkdwnHTML
	}
	var pb, hb strings.Builder
	last := 0
	for _, m := range slackToken.FindAllStringSubmatchIndex(s, -1) {
		before := unescapeSlack(s[last:m[0]])
		pb.WriteString(before)
		hb.WriteString(htmlText(before))
		target := unescapeSlack(s[m[2]:m[3]])
		label := ""
		if m[4] >= 0 {
			label = unescapeSlack(s[m[4]:m[5]])
		}
		switch {
		case strings.HasPrefix(target, "@") || strings.HasPrefix(target, "#"):
			// User and channel mentions notify nobody here.
			t := target
			if label != "" {
				t = target[:1] + label
			}
			pb.WriteString(t)
			hb.WriteString(html.EscapeString(t))
		case strings.HasPrefix(target, "!"):
			t := "@" + strings.TrimPrefix(target, "!")
			if label != "" {
				t = label
			}
			pb.WriteString(t)
			hb.WriteString(html.EscapeString(t))
		case safeURL(target):
			if label == "" {
				pb.WriteString(target)
				hb.WriteString(`<a href="` + html.EscapeString(target) + `">` + html.EscapeString(target) + "</a>")
			} else {
				pb.WriteString(label + " (" + target + ")")
				hb.WriteString(`<a href="` + html.EscapeString(target) + `">` + html.EscapeString(label) + "</a>")
			}
		default:
			// Not a link we allow (javascript: and the like): plain text.
			t := target
			if label != "" {
				t = label + " (" + target + ")"
			}
			pb.WriteString(t)
			hb.WriteString(html.EscapeString(t))
		}
		last = m[1]
	}
	rest := unescapeSlack(s[last:])
	pb.WriteString(rest)
	hb.WriteString(htmlText(rest))
	return pb.String(), hb.String()
}

// htmlText escapes text and keeps its line breaks.
func htmlText(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "\n", "<br/>")
}

var (
	codeSpan   = regexp.MustCompile("`([^`\n]+)`")
	boldSpan   = regexp.MustCompile(`(^|[\s(])\*([^\s*](?:[^*\n]*[^\s*])?)\*`)
	italicSpan = regexp.MustCompile(`(^|[\s(])_([^\s_](?:[^_\n]*[^\s_])?)_`)
	strikeSpan = regexp.MustCompile(`(^|[\s(])~([^\s~](?:[^~\n]*[^\s~])?)~`)
)

// mrkdwnHTML escapes text and renders Slack's mrkdwn as XHTML-IM:
// ```blocks``` as <pre>, lines starting with > as <blockquote>, `code`,
// *bold*, _italic_ and ~strike~ (spans within one line; nothing inside
// code is styled).
func mrkdwnHTML(s string) string {
	var out strings.Builder
	for i, part := range strings.Split(s, "```") {
		if i%2 == 1 {
			out.WriteString("<pre>" + html.EscapeString(strings.Trim(part, "\n")) + "</pre>")
			continue
		}
		for j, line := range strings.Split(part, "\n") {
			if j > 0 {
				out.WriteString("<br/>")
			}
			quote := strings.HasPrefix(line, ">")
			if quote {
				line = strings.TrimPrefix(strings.TrimPrefix(line, ">"), " ")
				out.WriteString("<blockquote>")
			}
			last := 0
			for _, m := range codeSpan.FindAllStringSubmatchIndex(line, -1) {
				out.WriteString(inlineMarkup(line[last:m[0]]))
				out.WriteString("<code>" + html.EscapeString(line[m[2]:m[3]]) + "</code>")
				last = m[1]
			}
			out.WriteString(inlineMarkup(line[last:]))
			if quote {
				out.WriteString("</blockquote>")
			}
		}
	}
	return out.String()
}

// inlineMarkup escapes a piece of one line and renders *bold*, _italic_
// and ~strike~ in it (the escapes leave *, _ and ~ alone).
func inlineMarkup(s string) string {
	h := html.EscapeString(s)
	h = boldSpan.ReplaceAllString(h, "${1}<strong>${2}</strong>")
	h = italicSpan.ReplaceAllString(h, "${1}<em>${2}</em>")
	return strikeSpan.ReplaceAllString(h, "${1}<del>${2}</del>")
}

// unescapeSlack undoes the three escapes Slack senders apply.
func unescapeSlack(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

var safeScheme = regexp.MustCompile(`^(?i)(https?://[^\s"<>]+|mailto:[^\s"<>]+|tel:[0-9+*#().\- ]+|sips?:[^\s"<>]+)$`)

func safeURL(u string) bool { return u != "" && safeScheme.MatchString(u) }

// xmlChar drops runes XML 1.0 cannot carry (control characters), so the
// XHTML-IM part is always a well-formed stanza.
func xmlChar(r rune) rune {
	if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF) {
		return r
	}
	return -1
}

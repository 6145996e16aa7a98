package providertest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
)

// MetaMessage is one message the Cloud API fake accepted.
type MetaMessage struct {
	ID   string
	Raw  map[string]any // the JSON body as sent
	To   string
	Type string
}

// Meta is the fake WhatsApp Cloud API for one business phone number.
type Meta struct {
	*httptest.Server
	recorder
	PhoneNumberID, AccessToken string
	mu                         sync.Mutex
	accepted                   []MetaMessage
}

var (
	metaPath   = regexp.MustCompile(`^/([^/]+)/messages$`)
	waID       = regexp.MustCompile(`^\+?[1-9][0-9]{6,14}$`)
	metaLocale = regexp.MustCompile(`^[a-z]{2,3}(_[A-Z]{2})?$`)
)

// NewMeta starts a fake Cloud API.
func NewMeta(phoneNumberID, accessToken string) *Meta {
	f := &Meta{PhoneNumberID: phoneNumberID, AccessToken: accessToken}
	f.Server = serve(http.HandlerFunc(f.handle))
	return f
}

// Accepted returns the messages accepted so far.
func (f *Meta) Accepted() []MetaMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]MetaMessage(nil), f.accepted...)
}

func metaError(w http.ResponseWriter, status, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "code": code, "fbtrace_id": "A" + randomHex(10),
	}})
}

func (f *Meta) handle(w http.ResponseWriter, r *http.Request) {
	fault := f.nextFault()
	if r.Header.Get("Authorization") != "Bearer "+f.AccessToken {
		metaError(w, http.StatusUnauthorized, 190, "OAuthException", "Invalid OAuth access token - Cannot parse access token")
		return
	}
	m := metaPath.FindStringSubmatch(r.URL.Path)
	if m == nil || r.Method != http.MethodPost {
		metaError(w, http.StatusBadRequest, 100, "GraphMethodException", "Unsupported request - method type: "+strings.ToLower(r.Method))
		return
	}
	if m[1] != f.PhoneNumberID {
		metaError(w, http.StatusBadRequest, 100, "GraphMethodException", "Unsupported post request. Object with ID '"+m[1]+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation.")
		return
	}
	if fault != nil {
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		metaError(w, fault.Status, fault.Code, "OAuthException", fault.Message)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		metaError(w, 400, 100, "OAuthException", "(#100) Invalid parameter")
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		metaError(w, 400, 100, "OAuthException", "(#100) Invalid parameter")
		return
	}
	to, _ := body["to"].(string)
	typ, _ := body["type"].(string)
	if typ == "" {
		typ = "text"
	}
	if err := checkMetaBody(body, typ, to); err != "" {
		metaError(w, 400, 100, "OAuthException", err)
		return
	}
	id := "wamid.HBgL" + strings.ToUpper(randomHex(12))
	f.mu.Lock()
	f.accepted = append(f.accepted, MetaMessage{ID: id, Raw: body, To: to, Type: typ})
	f.mu.Unlock()
	item := map[string]any{"id": id}
	if typ == "template" {
		item["message_status"] = "accepted"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"messaging_product": "whatsapp",
		"contacts":          []any{map[string]any{"input": to, "wa_id": strings.TrimPrefix(to, "+")}},
		"messages":          []any{item},
	})
}

// checkMetaBody returns the Cloud API's error message for a bad body.
func checkMetaBody(body map[string]any, typ, to string) string {
	if body["messaging_product"] != "whatsapp" {
		return "(#100) The parameter messaging_product is required."
	}
	if to == "" {
		return "(#100) The parameter to is required."
	}
	if !waID.MatchString(to) {
		return "(#100) Invalid parameter: to"
	}
	switch typ {
	case "text":
		text, _ := body["text"].(map[string]any)
		b, _ := text["body"].(string)
		if b == "" {
			return "(#100) The parameter text['body'] is required."
		}
		if len([]rune(b)) > 4096 {
			return "(#100) Param text['body'] must be at most 4096 characters long."
		}
	case "template":
		tpl, _ := body["template"].(map[string]any)
		name, _ := tpl["name"].(string)
		lang, _ := tpl["language"].(map[string]any)
		code, _ := lang["code"].(string)
		if name == "" {
			return "(#100) The parameter template['name'] is required."
		}
		if !metaLocale.MatchString(code) {
			return "(#100) Param template['language']['code'] is not a valid locale."
		}
		comps, _ := tpl["components"].([]any)
		for _, c := range comps {
			cm, _ := c.(map[string]any)
			params, _ := cm["parameters"].([]any)
			for _, p := range params {
				pm, _ := p.(map[string]any)
				if pm["type"] != "text" || pm["text"] == "" || pm["text"] == nil {
					return "(#131008) Required parameter is missing"
				}
			}
		}
	default:
		return "(#100) Param type must be one of {AUDIO, CONTACTS, DOCUMENT, IMAGE, INTERACTIVE, LOCATION, REACTION, STICKER, TEMPLATE, TEXT, VIDEO}"
	}
	return ""
}

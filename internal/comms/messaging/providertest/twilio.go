package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"
)

// TwilioMessage is one message the Twilio fake accepted.
type TwilioMessage struct {
	Sid, AccountSid, To, From, MessagingServiceSid, Body string
	ContentSid, StatusCallback                           string
	ContentVariables                                     map[string]string
}

// Twilio is the fake Messages API.
type Twilio struct {
	*httptest.Server
	recorder
	AccountSid, AuthToken string
	mu                    sync.Mutex
	accepted              []TwilioMessage
}

var (
	twilioPath = regexp.MustCompile(`^/2010-04-01/Accounts/([^/]+)/Messages\.json$`)
	e164       = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	contentSid = regexp.MustCompile(`^HX[0-9a-fA-F]{32}$`)
)

// NewTwilio starts a fake Twilio for one account.
func NewTwilio(accountSid, authToken string) *Twilio {
	f := &Twilio{AccountSid: accountSid, AuthToken: authToken}
	f.Server = serve(http.HandlerFunc(f.handle))
	return f
}

// Accepted returns the messages accepted so far.
func (f *Twilio) Accepted() []TwilioMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]TwilioMessage(nil), f.accepted...)
}

func twilioError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"code": code, "message": msg, "more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code), "status": status,
	})
}

func (f *Twilio) handle(w http.ResponseWriter, r *http.Request) {
	fault := f.nextFault()
	m := twilioPath.FindStringSubmatch(r.URL.Path)
	if m == nil || r.Method != http.MethodPost {
		twilioError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != f.AccountSid || pass != f.AuthToken || m[1] != f.AccountSid {
		twilioError(w, http.StatusUnauthorized, 20003, "Authenticate")
		return
	}
	if fault != nil {
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		twilioError(w, fault.Status, fault.Code, fault.Message)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		twilioError(w, http.StatusBadRequest, 20001, "Content-Type must be application/x-www-form-urlencoded")
		return
	}
	if err := r.ParseForm(); err != nil {
		twilioError(w, http.StatusBadRequest, 20001, "malformed form")
		return
	}
	msg := TwilioMessage{
		AccountSid: f.AccountSid, To: r.PostForm.Get("To"), From: r.PostForm.Get("From"), MessagingServiceSid: r.PostForm.Get("MessagingServiceSid"),
		Body: r.PostForm.Get("Body"), ContentSid: r.PostForm.Get("ContentSid"), StatusCallback: r.PostForm.Get("StatusCallback"),
	}
	to, toWA := strings.CutPrefix(msg.To, "whatsapp:")
	from, fromWA := strings.CutPrefix(msg.From, "whatsapp:")
	switch {
	case msg.To == "":
		twilioError(w, 400, 21604, "A 'To' phone number is required.")
	case !e164.MatchString(to):
		twilioError(w, 400, 21211, fmt.Sprintf("Invalid 'To' Phone Number: %s", msg.To))
	case msg.From == "" && msg.MessagingServiceSid == "":
		twilioError(w, 400, 21603, "A 'From' phone number is required.")
	case msg.From != "" && !e164.MatchString(from) && !regexp.MustCompile(`^[A-Za-z0-9 ]{1,11}$`).MatchString(from):
		twilioError(w, 400, 21212, fmt.Sprintf("Invalid 'From' Phone Number: %s", msg.From))
	case toWA != fromWA && msg.From != "":
		twilioError(w, 400, 63007, "Twilio could not find a Channel with the specified From address")
	case msg.Body == "" && msg.ContentSid == "":
		twilioError(w, 400, 21619, "A text message body or media url must be specified.")
	case msg.ContentSid != "" && !contentSid.MatchString(msg.ContentSid):
		twilioError(w, 400, 21655, "The ContentSid is Invalid.")
	case len([]rune(msg.Body)) > 1600:
		twilioError(w, 400, 21617, "The concatenated message body exceeds the 1600 character limit.")
	default:
		if cv := r.PostForm.Get("ContentVariables"); cv != "" {
			if err := json.Unmarshal([]byte(cv), &msg.ContentVariables); err != nil {
				twilioError(w, 400, 21656, "The ContentVariables Parameter is invalid.")
				return
			}
		}
		msg.Sid = "SM" + randomHex(16)
		f.mu.Lock()
		f.accepted = append(f.accepted, msg)
		f.mu.Unlock()
		now := time.Now().UTC().Format(time.RFC1123Z)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"account_sid": f.AccountSid, "api_version": "2010-04-01", "body": msg.Body, "date_created": now, "date_sent": nil,
			"date_updated": now, "direction": "outbound-api", "error_code": nil, "error_message": nil, "from": msg.From,
			"messaging_service_sid": nil, "num_media": "0", "num_segments": "1", "price": nil, "price_unit": nil,
			"sid": msg.Sid, "status": "queued", "subresource_uris": map[string]string{"media": "/2010-04-01/Accounts/" + f.AccountSid + "/Messages/" + msg.Sid + "/Media.json"},
			"to": msg.To, "uri": "/2010-04-01/Accounts/" + f.AccountSid + "/Messages/" + msg.Sid + ".json",
		})
	}
}

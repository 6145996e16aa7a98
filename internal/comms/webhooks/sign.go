package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// The headers every delivery carries.
const (
	HeaderID        = "X-Webhook-Id"
	HeaderTimestamp = "X-Webhook-Timestamp"
	HeaderSignature = "X-Webhook-Signature"
	HeaderEvent     = "X-Webhook-Event"
)

// Sign is the X-Webhook-Signature value of body sent at unix time ts:
// "sha256=" and the hex HMAC-SHA256 of "<ts>.<body>" keyed with secret.
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a signature the way a receiver should (constant time).
func Verify(secret string, ts int64, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, ts, body)), []byte(signature))
}

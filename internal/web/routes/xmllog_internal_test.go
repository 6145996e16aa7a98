package routes

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// A fetch that fails (a server error) is logged at error whatever the
// access log says, and a refusal of FreeSWITCH's credentials at info;
// successful fetches under the default settings write nothing.
func TestXMLFetchFailuresAreLogged(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	app := fiber.New(fiber.Config{ErrorHandler: errorHandler})
	app.Use(requestContext(log, nil, time.Second, XMLAccessLog{Slow: time.Hour}))
	app.Post(xmlRoute, func(c *fiber.Ctx) error {
		switch c.Get("X-Outcome") {
		case "fail":
			return errors.New("database exploded")
		case "refuse":
			return newError(fiber.StatusUnauthorized, "unauthorized", "FreeSWITCH XML needs valid credentials")
		}
		return c.SendString("<document/>")
	})
	for _, outcome := range []string{"ok", "fail", "refuse", "ok"} {
		req := httptest.NewRequest("POST", xmlRoute, nil)
		req.Header.Set("X-Outcome", outcome)
		req.Header.Set("X-Request-ID", "req-"+outcome)
		if _, err := app.Test(req, -1); err != nil {
			t.Fatal(err)
		}
	}
	levels := map[string][]string{}
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var l map[string]any
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		id, _ := l["request_id"].(string)
		if l["msg"] != "http request" {
			continue // the error handler's own line of the failure
		}
		levels[id] = append(levels[id], l["level"].(string))
	}
	want := map[string][]string{"req-fail": {"ERROR"}, "req-refuse": {"INFO"}}
	if len(levels) != len(want) || len(levels["req-fail"]) != 1 || levels["req-fail"][0] != "ERROR" ||
		len(levels["req-refuse"]) != 1 || levels["req-refuse"][0] != "INFO" {
		t.Errorf("log levels by request %v, want %v", levels, want)
	}
}

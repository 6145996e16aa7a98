package openapiclient_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/web/routes/openapiclient"
)

// TestGeneratedClient uses the client generated from the served document
// (kept current by routes' TestGeneratedClientIsCurrent) against a real
// server: create, list, change and delete an extension, and read refusals.
// Its requests also pass the document check of every test request.
func TestGeneratedClient(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "gen")
		c := newClient(t, s)
		ctx := context.Background()
		str := func(v string) *string { return &v }

		body := openapiclient.ExtensionCreate{Name: "1001", FirstName: str("Eve"), LastName: str("Smith"), Mobile: str("+27825550001")}
		idem := &openapiclient.CreateExtensionParams{IdempotencyKey: str("gen-create-1001")}
		created, err := c.CreateExtensionWithResponse(ctx, tenant, idem, body)
		if err != nil {
			t.Fatal(err)
		}
		if created.StatusCode() != 201 || created.JSON201 == nil {
			t.Fatalf("create: %d %s", created.StatusCode(), created.Body)
		}
		ext := created.JSON201
		// A retry with the same Idempotency-Key is the same object, not a
		// conflict.
		if again, err := c.CreateExtensionWithResponse(ctx, tenant, idem, body); err != nil || again.StatusCode() != 201 || again.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retried create: %v %d %s", err, again.StatusCode(), again.Body)
		}
		if ext.Name != "1001" || ext.SipSecret == nil || len(*ext.SipSecret) < 12 || ext.VoicemailPin == nil || len(*ext.VoicemailPin) != 6 {
			t.Errorf("created extension: %s", created.Body)
		}
		if ext.ForwardAll != nil || ext.Record != nil {
			t.Errorf("unset forward_all and record should read as null: %s", created.Body)
		}

		list, err := c.ListExtensionsWithResponse(ctx, tenant, &openapiclient.ListExtensionsParams{Limit: ptrInt(10)})
		if err != nil {
			t.Fatal(err)
		}
		if list.StatusCode() != 200 || list.JSON200 == nil || len(*list.JSON200) != 1 || (*list.JSON200)[0].Name != "1001" {
			t.Fatalf("list: %d %s", list.StatusCode(), list.Body)
		}
		if got := list.HTTPResponse.Header.Get("X-Total-Count"); got != "1" {
			t.Errorf("X-Total-Count %q", got)
		}
		if (*list.JSON200)[0].SipAuthId == nil || *(*list.JSON200)[0].SipAuthId != "1001-"+tenant {
			t.Errorf("listed sip_auth_id: %s", list.Body)
		}

		updated, err := c.UpdateExtensionWithResponse(ctx, tenant, "1001", nil, openapiclient.ExtensionUpdate{FirstName: str("Eva")})
		if err != nil {
			t.Fatal(err)
		}
		if updated.StatusCode() != 200 || updated.JSON200 == nil || updated.JSON200.FirstName == nil || *updated.JSON200.FirstName != "Eva" ||
			updated.JSON200.LastName == nil || *updated.JSON200.LastName != "Smith" {
			t.Fatalf("update: %d %s", updated.StatusCode(), updated.Body)
		}

		dup, err := c.CreateExtensionWithResponse(ctx, tenant, nil, openapiclient.ExtensionCreate{Name: "1001"})
		if err != nil {
			t.Fatal(err)
		}
		if dup.StatusCode() != 409 || dup.JSON409 == nil || dup.JSON409.Code != "conflict" {
			t.Errorf("duplicate: %d %s", dup.StatusCode(), dup.Body)
		}

		del, err := c.DeleteExtensionWithResponse(ctx, tenant, "1001", nil)
		if err != nil {
			t.Fatal(err)
		}
		if del.StatusCode() != 204 {
			t.Fatalf("delete: %d %s", del.StatusCode(), del.Body)
		}
		gone, err := c.GetExtensionWithResponse(ctx, tenant, "1001")
		if err != nil {
			t.Fatal(err)
		}
		if gone.StatusCode() != 404 || gone.JSON404 == nil || gone.JSON404.Code != "not_found" {
			t.Errorf("read after delete: %d %s", gone.StatusCode(), gone.Body)
		}
	})
}

// TestGeneratedClientReadsRetryAfter: a refusal the client may retry (429
// here) reaches the generated client as the Error body with its parsed
// Retry-After.
func TestGeneratedClientReadsRetryAfter(t *testing.T) {
	s := apptest.Start(t, apptest.AnyEnv(t), map[string]string{"SWITCHBOARD_RATE_LIMIT": "1", "SWITCHBOARD_RATE_BURST": "1"})
	tenant := s.Tenant(t, "gen")
	c := newClient(t, s)
	for range 10 {
		list, err := c.ListExtensionsWithResponse(context.Background(), tenant, nil)
		if err != nil {
			t.Fatal(err)
		}
		if list.StatusCode() == 200 {
			continue
		}
		if list.StatusCode() != 429 || list.JSONDefault == nil || list.JSONDefault.Code != "rate_limited" ||
			list.HeadersDefault == nil || list.HeadersDefault.RetryAfter == nil || *list.HeadersDefault.RetryAfter != 1 {
			t.Fatalf("refusal: %d %s, headers %+v", list.StatusCode(), list.Body, list.HeadersDefault)
		}
		return
	}
	t.Fatal("ten requests at one a second were all answered 200")
}

func ptrInt(v int) *int { return &v }

// newClient is the generated client for s, with its platform key, sending
// through contractDoer.
func newClient(t *testing.T, s *apptest.Server) *openapiclient.ClientWithResponses {
	t.Helper()
	c, err := openapiclient.NewClientWithResponses(s.URL,
		openapiclient.WithHTTPClient(contractDoer{t: t, s: s}),
		openapiclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("X-API-Key", s.Key)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// contractDoer sends the generated client's requests through the test
// server's helper, so they are checked against the document like any other.
type contractDoer struct {
	t *testing.T
	s *apptest.Server
}

func (d contractDoer) Do(req *http.Request) (*http.Response, error) {
	r := d.s.Send(d.t, req)
	return &http.Response{StatusCode: r.Status, Status: http.StatusText(r.Status), Header: r.Header,
		Body: io.NopCloser(bytes.NewReader(r.Body)), ContentLength: int64(len(r.Body)), Request: req}, nil
}

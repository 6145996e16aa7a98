package routes

import (
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// TestRouteBodyLimitsPickTheRouteOfTheRequest: the larger body limit of an
// upload route applies to that route's requests only, matched as Fiber's
// router matches them (case-insensitive by default, query ignored).
func TestRouteBodyLimitsPickTheRouteOfTheRequest(t *testing.T) {
	cfg := fiber.Config{BodyLimit: 1 << 20}
	limits := routeBodyLimits([]Route{
		{Method: "POST", Path: "/api/tenants/:tenant/recordedcalls", BodyLimit: 64 << 20},
		{Method: "POST", Path: "/fs/xml"},
	}, cfg)
	for _, c := range []struct {
		method, uri string
		want        int
	}{
		{"POST", "/api/tenants/acme/recordedcalls", 64 << 20},
		{"POST", "/API/Tenants/acme/RecordedCalls?x=1", 64 << 20},
		{"GET", "/api/tenants/acme/recordedcalls", 0},
		{"POST", "/api/tenants/acme/recordedcalls/extra", 0},
		{"POST", "/fs/xml", 0},
		{"POST", "/api", 0},
	} {
		var h fasthttp.RequestHeader
		h.SetMethod(c.method)
		h.SetRequestURI(c.uri)
		if got := limits(&h).MaxRequestBodySize; got != c.want {
			t.Errorf("%s %s: body limit %d, want %d", c.method, c.uri, got, c.want)
		}
	}
}

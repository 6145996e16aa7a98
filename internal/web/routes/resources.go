package routes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
)

// crudRoutes generates a resource's routes from its declaration, each
// with its declared access.
func (s *server) crudRoutes(res *models.Resource) []Route {
	base := resourcePath(res)
	title := res.Title
	acc := func(op string) Access { return crudAccess(res, op) }
	if res.Singleton {
		return []Route{
			{Method: "GET", Path: base, Summary: "Show the " + title, Tag: res.Name, Auth: AuthAPI, Access: acc("get"), Resource: res, Op: "get", Handler: s.getObject(res)},
			{Method: "PUT", Path: base, Summary: "Change the " + title + dryRunNote, Tag: res.Name, Auth: AuthAPI, Access: acc("update"), Resource: res, Op: "update", Query: dryRunQuery, Idempotent: true, Handler: s.configIdempotent(s.updateObject(res))},
		}
	}
	item := base + "/:key"
	return []Route{
		{Method: "GET", Path: base + "/", Summary: listSummary(res), Tag: res.Name, Auth: AuthAPI, Access: acc("list"), Resource: res, Op: "list", Query: listParams(res), Handler: s.listObjects(res)},
		withUpload(res, Route{Method: "POST", Path: base + "/", Summary: "Create a " + title + dryRunNote, Tag: res.Name, Auth: AuthAPI, Access: acc("create"), Resource: res, Op: "create", Status: 201, Query: dryRunQuery, Idempotent: true, Handler: s.configIdempotent(s.createObject(res))}),
		{Method: "GET", Path: item, Summary: "Show a " + title, Tag: res.Name, Auth: AuthAPI, Access: acc("get"), Resource: res, Op: "get", Handler: s.getObject(res)},
		{Method: "PUT", Path: item, Summary: "Change any subset of a " + title + "'s fields" + dryRunNote, Tag: res.Name, Auth: AuthAPI, Access: acc("update"), Resource: res, Op: "update", Query: dryRunQuery, Idempotent: true, Handler: s.configIdempotent(s.updateObject(res))},
		{Method: "DELETE", Path: item, Summary: "Delete a " + title, Tag: res.Name, Auth: AuthAPI, Access: acc("delete"), Resource: res, Op: "delete", Status: 204, Idempotent: true, Handler: s.configIdempotent(s.deleteObject(res))},
	}
}

// crudAccess is who may call a generated route. Tenant resources act in
// the path's tenant; platform resources need platform credentials, except
// that everyone lists the tenants they may see and reads their own (a
// tenant credential must not raise its own limits or delete itself). A
// user key reads its own extension and changes its phone settings.
func crudAccess(res *models.Resource, op string) Access {
	a := Access{Perm: "config.read", Scope: ScopePlatform}
	if op != "list" && op != "get" {
		a.Perm = "config.write"
		if res.WritePermission != "" {
			a.Perm = res.WritePermission
		}
		if res.OwnPermission != "" {
			a.OwnPerm, a.User = res.OwnPermission, UserOwnObjects
		}
	}
	switch {
	case res.Scope == models.TenantScope:
		a.Scope = ScopeTenant
	case res.Name == "tenants" && op == "list":
		a.Scope = ScopeVisible
	case res.Name == "tenants" && op == "get":
		a.Scope = ScopeTenantObject
	}
	if res.Name == "extensions" {
		switch op {
		case "get":
			a.User = UserOwnExtension
		case "update":
			a.User = UserPhoneSettings
		}
	}
	return a
}

// writeInput decodes a write's JSON body.
func (s *server) writeInput(c *fiber.Ctx) (models.Owner, map[string]any, error) {
	in, err := decodeObject(c)
	return tenantOwner(c), in, err
}

// dryRunParam asks a create or update to run every check of the write and
// store nothing (models.WithDryRun): the answer is the one the write would
// get. The configuration manager's forms check each field with it.
const dryRunParam = "dry_run"

var dryRunQuery = []string{dryRunParam}

const dryRunNote = "; with ?dry_run=true every check runs and nothing is stored (the answer is the one the write would get)"

// dryRun reads ?dry_run= (true or 1; false, 0 or absent: a real write).
func dryRun(c *fiber.Ctx) (bool, error) {
	switch c.Query(dryRunParam) {
	case "":
		return false, nil
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, models.FieldError(dryRunParam, "must be true or false")
}

// writeContext is the context of a create or update: its actor, and a dry
// run when asked for.
func writeContext(c *fiber.Ctx) (context.Context, bool, error) {
	dry, err := dryRun(c)
	ctx := models.WithActor(c.UserContext(), principal(c).Name)
	if dry {
		ctx = models.WithDryRun(ctx)
	}
	return ctx, dry, err
}

func (s *server) listObjects(res *models.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o := tenantOwner(c)
		page, err := pageParams(c)
		if err != nil {
			return err
		}
		if res.Name == "tenants" {
			page.Only = visibleTenants(principal(c))
		}
		query, err := url.ParseQuery(string(c.Request().URI().QueryString()))
		if err != nil {
			return &models.ValidationError{Fields: map[string]string{"query": "is not a valid URL query string"}}
		}
		if page.Query, err = models.ParseListQuery(res, query); err != nil {
			return err
		}
		recs, total, err := s.Store.List(c.UserContext(), res, o, page)
		if err != nil {
			return err
		}
		return sendPage(c, recs, total, page)
	}
}

// visibleTenants is nil for callers who see every tenant.
func visibleTenants(p *Principal) []string {
	switch {
	case p.Kind == "tenant_key" || p.Kind == "user_key":
		return []string{p.Tenant}
	case p.Tenants != nil:
		return p.Tenants
	}
	return nil
}

func (s *server) getObject(res *models.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o := tenantOwner(c)
		rec, err := s.Store.Get(c.UserContext(), res, o, c.Params("key"))
		if err != nil {
			return err
		}
		return c.JSON(rec)
	}
}

func (s *server) createObject(res *models.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		// Tenants (and so clones of any tenant) are created only with
		// platform credentials, which may read every tenant.
		o, in, err := s.writeInput(c)
		if err != nil {
			return err
		}
		if err := s.ownOnly(c, res, o, "", in); err != nil {
			return err
		}
		ctx, dry, err := writeContext(c)
		if err != nil {
			return err
		}
		rec, err := s.Store.Create(ctx, res, o, in)
		if err != nil {
			return err
		}
		if dry {
			return c.Status(fiber.StatusCreated).JSON(rec)
		}
		c.Location(strings.TrimSuffix(c.Path(), "/") + "/" + url.PathEscape(fmt.Sprint(rec[res.KeyField()])))
		return c.Status(fiber.StatusCreated).JSON(rec)
	}
}

func (s *server) updateObject(res *models.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o, in, err := s.writeInput(c)
		if err != nil {
			return err
		}
		if err := s.ownOnly(c, res, o, c.Params("key"), in); err != nil {
			return err
		}
		ctx, _, err := writeContext(c)
		if err != nil {
			return err
		}
		rec, err := s.Store.Update(ctx, res, o, c.Params("key"), in)
		if err != nil {
			return err
		}
		return c.JSON(rec)
	}
}

func (s *server) deleteObject(res *models.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o := tenantOwner(c)
		key := c.Params("key")
		if err := s.ownOnly(c, res, o, key, nil); err != nil {
			return err
		}
		if err := s.Store.Delete(c.UserContext(), res, o, key); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// decodeObject reads a JSON object body strictly: malformed JSON, a body
// that is not an object and trailing data are refused with 400.
func decodeObject(c *fiber.Ctx) (map[string]any, error) {
	if strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEMultipartForm) {
		return decodeMultipart(c)
	}
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errNotObject
	}
	return strictObject(body)
}

// maxJSONDepth bounds how deeply a request body nests objects and arrays;
// no documented body comes near it.
const maxJSONDepth = 32

var errNotObject = newError(fiber.StatusBadRequest, "invalid_json", "request body must be a JSON object")

// strictObject is the one decoder of JSON request bodies (decodeObject,
// and jsonBody before every route declaring a JSON body): valid UTF-8,
// escapes included (checkUTF8), one JSON object nesting at most
// maxJSONDepth levels, nothing after it; anything else is 400.
func strictObject(body []byte) (map[string]any, error) {
	if err := checkUTF8(body); err != nil {
		return nil, err
	}
	if !depthWithin(body, maxJSONDepth) {
		return nil, newError(fiber.StatusBadRequest, "invalid_json", fmt.Sprintf("request body nests deeper than %d levels", maxJSONDepth))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var in map[string]any
	if err := dec.Decode(&in); err != nil || in == nil {
		return nil, errNotObject
	}
	if dec.More() {
		return nil, newError(fiber.StatusBadRequest, "invalid_json", "request body has data after the JSON object")
	}
	return in, nil
}

// depthWithin reports whether the JSON text nests objects and arrays at
// most max deep; brackets inside strings do not count. Malformed text is
// left to the decoder.
func depthWithin(body []byte, max int) bool {
	depth, inString := 0, false
	for i := 0; i < len(body); i++ {
		switch b := body[i]; {
		case inString && b == '\\':
			i++
		case b == '"':
			inString = !inString
		case inString:
		case b == '{' || b == '[':
			if depth++; depth > max {
				return false
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return true
}

// jsonBody runs a route's JSON request body through strictObject before
// the handler, so no route acts on malformed JSON, whether or not its
// handler reads the body. An action without input (request Empty) takes
// no body or {}; a field in it is refused. Bodies of other declared types
// (multipart, CSV, forms) are left to the handler.
func jsonBody(r Route) fiber.Handler {
	empty := requestSchema(r) == "Empty"
	return func(c *fiber.Ctx) error {
		mt, _, _ := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
		if mt != "" && mt != fiber.MIMEApplicationJSON {
			return c.Next()
		}
		body := c.Body()
		if len(bytes.TrimSpace(body)) == 0 {
			return c.Next()
		}
		in, err := strictObject(body)
		if err != nil {
			return err
		}
		if empty && len(in) > 0 {
			ve := &models.ValidationError{Fields: map[string]string{}}
			for k := range in {
				ve.Fields[k] = "unknown field: this action takes no input (send no body or {})"
			}
			return ve
		}
		return c.Next()
	}
}

// takesJSON reports whether jsonBody guards a route: it declares a
// request body that may be JSON, and does not answer malformed bodies in
// its own shape (OwnBody).
func takesJSON(r Route) bool {
	if requestSchema(r) == "" || r.OwnBody {
		return false
	}
	if r.Consumes == "" {
		return true
	}
	for _, ct := range strings.Split(r.Consumes, ",") {
		if strings.TrimSpace(ct) == fiber.MIMEApplicationJSON {
			return true
		}
	}
	return false
}

// checkUTF8 refuses a body that is not valid UTF-8, or whose escapes
// (a lone surrogate such as "\ud800") decode to no character: Go's JSON
// decoder would silently store U+FFFD instead. Backslashes occur only in
// JSON strings, so the escapes can be read without parsing.
func checkUTF8(body []byte) error {
	bad := newError(fiber.StatusBadRequest, "invalid_utf8", "request body must be valid UTF-8 JSON")
	if !utf8.Valid(body) {
		return bad
	}
	for i := 0; i < len(body)-1; i++ {
		if body[i] != '\\' {
			continue
		}
		if body[i+1] != 'u' {
			i++ // an escaped character, possibly a backslash
			continue
		}
		r, ok := hex4(body, i+2)
		switch {
		case !ok:
			return nil // malformed: the decoder refuses it
		case r >= 0xDC00 && r <= 0xDFFF:
			return bad
		case r >= 0xD800 && r <= 0xDBFF:
			if low, ok := hex4(body, i+8); !ok || body[i+6] != '\\' || body[i+7] != 'u' || low < 0xDC00 || low > 0xDFFF {
				return bad
			}
			i += 11
		default:
			i += 5
		}
	}
	return nil
}

// hex4 reads the four hex digits at b[at:].
func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[at:at+4]), 16, 16)
	return rune(n), err == nil
}

const (
	defaultLimit = 50
	maxLimit     = 1000
)

// pageParams reads limit and offset.
func pageParams(c *fiber.Ctx) (models.Page, error) {
	p := models.Page{Limit: defaultLimit}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			return p, &models.ValidationError{Fields: map[string]string{"limit": fmt.Sprintf("must be an integer from 1 to %d", maxLimit)}}
		}
		p.Limit = n
	}
	if v := c.Query("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return p, &models.ValidationError{Fields: map[string]string{"offset": "must be a non-negative integer"}}
		}
		p.Offset = n
	}
	return p, nil
}

// sendPage writes a list: the JSON array, X-Total-Count and a Link header.
func sendPage(c *fiber.Ctx, items any, total int, p models.Page) error {
	c.Set("X-Total-Count", strconv.Itoa(total))
	var links []string
	q, _ := url.ParseQuery(string(c.Request().URI().QueryString()))
	link := func(offset int, rel string) {
		q.Set("limit", strconv.Itoa(p.Limit))
		q.Set("offset", strconv.Itoa(offset))
		links = append(links, fmt.Sprintf(`<%s?%s>; rel="%s"`, c.Path(), q.Encode(), rel))
	}
	if p.Offset+p.Limit < total {
		link(p.Offset+p.Limit, "next")
	}
	if p.Offset > 0 {
		prev := p.Offset - p.Limit
		if prev < 0 {
			prev = 0
		}
		link(prev, "prev")
	}
	if len(links) > 0 {
		c.Set("Link", strings.Join(links, ", "))
	}
	c.Set("Access-Control-Expose-Headers", "X-Total-Count, Link")
	return c.JSON(items)
}

// ownOnly applies a resource's OwnPermission when the caller holds only
// that (authorize marked the request): the object (key, "" on create) must
// be one the caller created, and the chat channel it names (in, or the
// object's) one the caller belongs to: a public channel for any user key
// of the tenant, a private one for its members. Other credentials belong
// to no channel.
func (s *server) ownOnly(c *fiber.Ctx, res *models.Resource, o models.Owner, key string, in map[string]any) error {
	if own, _ := c.Locals(ownOnlyKey).(bool); !own || res.OwnPermission == "" {
		return nil
	}
	return checkOwn(c.UserContext(), s.Store, principal(c), res, o, key, in)
}

func checkOwn(ctx context.Context, st *models.Store, p *Principal, res *models.Resource, o models.Owner, key string, in map[string]any) error {
	channel, _ := in["channel"].(string)
	if key != "" {
		old, err := st.Get(ctx, res, o, key)
		if err != nil {
			return err
		}
		if by, _ := old["created_by"].(string); by != p.Name {
			return newError(fiber.StatusForbidden, "not_owner", "this credential manages only the "+res.Title+"s it created ("+res.OwnPermission+")")
		}
		if channel == "" {
			channel, _ = old["channel"].(string)
		}
	}
	if channel == "" {
		return nil // validation names the missing channel
	}
	if p.Kind != "user_key" {
		return newError(fiber.StatusForbidden, "not_in_channel", "with "+res.OwnPermission+" only a user key, for chat channels its extension belongs to")
	}
	recs, err := st.Records(ctx, st.Registry().Resource("chat_channels"), o, map[string]any{"name": channel})
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil // validation answers the unknown channel
	}
	if recs[0]["visibility"] == "private" && !listHas(recs[0]["members"], p.Extension) {
		return newError(fiber.StatusForbidden, "not_in_channel", "extension "+p.Extension+" is not a member of private channel "+channel)
	}
	return nil
}

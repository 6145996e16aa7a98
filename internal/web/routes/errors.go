package routes

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/comms/chat"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/models"
)

// apiError is an error with the status and machine code the client sees.
type apiError struct {
	Status int
	Code   string
	Msg    string
}

func (e *apiError) Error() string { return e.Msg }

func newError(status int, code, msg string) *apiError {
	return &apiError{Status: status, Code: code, Msg: msg}
}

// errorBody is the one error shape: {"error","code"} plus fields for validation.
type errorBody struct {
	Error  string            `json:"error"`
	Code   string            `json:"code"`
	Fields map[string]string `json:"fields,omitempty"`
}

// errorHandler is the only place errors become responses. Handlers return
// errors; driver text and internals never reach the client.
func errorHandler(c *fiber.Ctx, err error) error {
	status, body := classify(err)
	if status >= 500 {
		logger(c).Error("request failed", "status", status, "error", err)
	} else {
		logger(c).Debug("request refused", "status", status, "error", err)
	}
	setRetryAfter(c, err)
	if page, ok := c.Locals(htmlErrorsKey).([]int); ok && slices.Contains(page, status) {
		return renderError(c, status, body)
	}
	if status == fiber.StatusUnauthorized && c.Locals(basicChallengeKey) != nil {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="switchboard", charset="UTF-8"`)
	}
	return c.Status(status).JSON(body)
}

func classify(err error) (int, errorBody) {
	if me := mediaError(err); me != err {
		return classify(me)
	}
	var ae *apiError
	var ve *models.ValidationError
	var ce *models.ConflictError
	var re *models.RefusedError
	var le *models.LimitError
	var cmdErr *esl.CommandError
	var fe *fiber.Error
	switch {
	case errors.As(err, &ae):
		return ae.Status, errorBody{Error: ae.Msg, Code: ae.Code}
	case errors.As(err, &ve):
		return fiber.StatusBadRequest, errorBody{Error: "invalid input", Code: "validation_failed", Fields: ve.Fields}
	case errors.As(err, &ce):
		return fiber.StatusConflict, errorBody{Error: ce.Msg, Code: "conflict", Fields: ce.Fields}
	case errors.As(err, &le):
		return fiber.StatusUnprocessableEntity, errorBody{Error: le.Error(), Code: le.Code()}
	case errors.As(err, &re):
		return fiber.StatusUnprocessableEntity, errorBody{Error: re.Msg, Code: re.Code}
	case errors.Is(err, models.ErrUnavailable):
		return fiber.StatusServiceUnavailable, errorBody{Error: "the database is unavailable; try again later", Code: "database_unavailable"}
	case errors.Is(err, models.ErrNotFound):
		return fiber.StatusNotFound, errorBody{Error: "not found", Code: "not_found"}
	case errors.Is(err, models.ErrReferenced):
		return fiber.StatusConflict, errorBody{Error: "the object is still in use by other objects", Code: "still_referenced"}
	case errors.As(err, &cmdErr):
		return fiber.StatusBadGateway, errorBody{Error: "FreeSWITCH refused: " + cmdErr.Reply, Code: "freeswitch_error"}
	case errors.Is(err, esl.ErrNodeDown), errors.Is(err, esl.ErrDisconnected), errors.Is(err, esl.ErrUnknownNode):
		return fiber.StatusServiceUnavailable, errorBody{Error: "FreeSWITCH node unavailable: " + err.Error(), Code: "freeswitch_unavailable"}
	case errors.As(err, &fe):
		return fe.Code, errorBody{Error: fe.Message, Code: fiberCode(fe.Code)}
	}
	return fiber.StatusInternalServerError, errorBody{Error: "internal error", Code: "internal"}
}

func fiberCode(status int) string {
	switch status {
	case fiber.StatusRequestEntityTooLarge:
		return "body_too_large"
	case fiber.StatusNotFound:
		return "not_found"
	case fiber.StatusMethodNotAllowed:
		return "method_not_allowed"
	case fiber.StatusBadRequest:
		return "bad_request"
	case fiber.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	}
	return "http_error"
}

var _ = slog.LevelDebug

// errNoNodeUp refuses a call while no FreeSWITCH node is connected.
var errNoNodeUp = fmt.Errorf("%w: %w", newError(fiber.StatusServiceUnavailable, "freeswitch_unavailable", "no FreeSWITCH node is connected; try again later"), esl.ErrNoNode)

// outageRetry is the Retry-After of answers refused during an outage of a
// part that comes back on its own: the chat server is probed every second
// while down, a FreeSWITCH connection is redialled within seconds and the
// database pool dials again on the next request, so a client waiting this
// long usually finds it back.
const outageRetry = 5 * time.Second

// setRetryAfter sets Retry-After when err is such an outage. A chat server
// that is not configured, or a node that does not exist, is no outage:
// trying again does not help.
func setRetryAfter(c *fiber.Ctx, err error) {
	if errors.Is(err, chat.ErrUnavailable) || errors.Is(err, esl.ErrNoNode) || errors.Is(err, esl.ErrDisconnected) || errors.Is(err, models.ErrUnavailable) {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(outageRetry/time.Second)))
	}
}

// htmlErrorsKey holds the statuses a page answers as a page (its route's
// HTMLAnswers): a person gets a page saying what went wrong, not JSON.
const htmlErrorsKey = "html_errors"

func htmlErrors(statuses []int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Locals(htmlErrorsKey, statuses)
		return c.Next()
	}
}

type errorView struct {
	page
	Status int
	Code   string
}

// renderError answers a page's refusal as a page.
func renderError(c *fiber.Ctx, status int, body errorBody) error {
	v := errorView{page: page{Title: fmt.Sprint(status) + " " + http.StatusText(status), Error: body.Error}, Status: status, Code: body.Code}
	if p, ok := c.Locals(principalKey).(*Principal); ok && p != nil {
		v.Admin, v.Role = p.username, p.role
	}
	if body.Fields != nil {
		v.Error = (&models.ValidationError{Fields: body.Fields}).Error()
	}
	return render(c, status, "error.html", v)
}

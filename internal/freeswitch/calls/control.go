package calls

import (
	"context"
	"fmt"

	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
)

// Control acts on live calls: it places callback calls and hangs up,
// transfers and records channels on the node that holds them. HTTP
// handlers call it and never the node pool, so what a handler can make a
// node do is exactly these methods.
type Control struct {
	pool    *esl.Pool
	tracker *Tracker
}

// NewControl returns the call control over pool, recording placed calls
// in tracker.
func NewControl(pool *esl.Pool, tracker *Tracker) *Control {
	return &Control{pool: pool, tracker: tracker}
}

// AnyNode reports whether a node's command connection is up.
func (c *Control) AnyNode() bool { return c.pool.AnyUp() }

// PickNode names a node to place a call on (false when none is up).
func (c *Control) PickNode() (string, bool) { return c.pool.FirstUp() }

// Nodes lists the configured nodes and their connection state.
func (c *Control) Nodes() []esl.NodeStatus { return c.pool.Nodes() }

// Originate places call on call.Node: it reserves the origin leg's
// channel id (named after originName), stores the call in state queued
// and sends the originate; a refused originate fails the call. It returns
// the origin channel's id.
func (c *Control) Originate(ctx context.Context, call Call, originName string, cmd command.Command) (string, error) {
	chID, err := c.tracker.ReserveID(ctx, call.Tenant, "Local", originName, call.Node, call.ID)
	if err != nil {
		return "", fmt.Errorf("reserve channel id: %w", err)
	}
	call.OriginChannel = chID
	if err := c.tracker.PlaceCall(ctx, call); err != nil {
		return "", err
	}
	if _, err := c.pool.BgAPI(ctx, call.Node, cmd); err != nil {
		c.tracker.FailCall(context.WithoutCancel(ctx), call.ID, err.Error())
		return "", err
	}
	return chID, nil
}

// Hangup ends the channel uuid on node.
func (c *Control) Hangup(ctx context.Context, node, uuid string) error {
	cmd, err := command.UUIDKill(uuid)
	if err != nil {
		return err
	}
	_, err = c.pool.API(ctx, node, cmd)
	return err
}

// Transfer blind-transfers the channel uuid on node to dest in the
// dialplan context (the channel's tenant). A value no command can carry
// is a *command.ValueError.
func (c *Control) Transfer(ctx context.Context, node, uuid, dest, context string) error {
	cmd, err := command.UUIDTransfer(uuid, dest, context)
	if err != nil {
		return err
	}
	_, err = c.pool.API(ctx, node, cmd)
	return err
}

// Record starts or stops ("start", "stop") recording the channel uuid on
// node into path, a file on the node ("all" stops every recording).
func (c *Control) Record(ctx context.Context, node, uuid, action, path string) error {
	cmd, err := command.UUIDRecord(uuid, action, path)
	if err != nil {
		return fmt.Errorf("recording path %q: %w", path, err)
	}
	_, err = c.pool.API(ctx, node, cmd)
	return err
}

package app

import (
	"context"
	"fmt"
)

func simCommand(ctx context.Context, env Env, args []string) error {
	return fmt.Errorf("%w: sim arrives with the live-call work", ErrUsage)
}

package calls

import (
	"context"
	"encoding/json"
	"sync"
)

// Subscribe streams the changes of one tenant's channels ("" = all tenants,
// for platform callers). It returns once the subscription is active, so no
// change applied after it returns is missed. The channel is closed when ctx
// ends or the returned func is called; the func waits for that. A slow reader
// stalls only its own subscription (go-redis drops messages after a while).
func (t *Tracker) Subscribe(ctx context.Context, tenant string) (<-chan Change, func()) {
	name := t.prefix + "events"
	if tenant != "" {
		name += ":" + tenant
	}
	ctx, cancel := context.WithCancel(ctx)
	ps := t.rdb.Subscribe(ctx, name)
	out := make(chan Change, 64)
	if _, err := ps.Receive(ctx); err != nil {
		t.opts.Logger.Warn("subscribe to channel events", "error", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(out)
		msgs := ps.Channel()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-msgs:
				if !ok {
					return
				}
				var c Change
				if err := json.Unmarshal([]byte(m.Payload), &c); err != nil {
					t.opts.Logger.Warn("decode channel event", "error", err)
					continue
				}
				select {
				case out <- c:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			ps.Close()
			wg.Wait()
		})
	}
	context.AfterFunc(ctx, func() { go stop() })
	return out, stop
}

package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/comms/chat"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// chatClient builds the ejabberd client from the configuration.
func chatClient(cfg Config) *chat.Client {
	return chat.NewClient(chat.Config{APIURL: cfg.ChatAPIURL, Domain: cfg.ChatDomain, MUCDomain: cfg.ChatMUCDomain, WSURL: cfg.ChatWSURL})
}

// newChatServices wires team chat: the ejabberd client, the sync that
// pushes chat channels, accounts and memberships to ejabberd (a full
// reconcile at start, then each committed change through the outbox,
// retried until ejabberd takes it), the /api/connect and webhook routes and
// the readiness line.
func newChatServices(ctx context.Context, s *services, cfg Config, st *models.Store, rdb redis.UniversalClient, log *slog.Logger) {
	client := chatClient(cfg)
	st.SetBaseURL(cfg.BaseURL) // incoming webhook URLs
	sync := chat.NewSync(client, st, log.With("component", "chat"))
	s.chat = sync
	queue := chat.NewQueue(client, st, chat.QueueOptions{Group: cfg.OutboxGroup, Logger: log.With("component", "chat-queue")})
	s.chatQueue = queue
	if client.Config().Enabled() {
		st.SetChatMUCDomain(client.Config().MUCDomain)
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { defer close(done); sync.Run(runCtx) }()
		// Channel messages are posted by the queue's worker; the watch
		// keeps the chat server's state current, so sends answer 503 at
		// once during an outage and posting resumes when it ends.
		qdone, wdone := make(chan struct{}), make(chan struct{})
		go func() { defer close(qdone); queue.Run(runCtx) }()
		go func() { defer close(wdone); client.Watch(runCtx, time.Second) }()
		s.stops = append(s.stops, func() { cancel(); <-done; <-qdone; <-wdone })
		sync.Notify("")
		// Committed changes of channels, extensions and tenants arrive
		// through the outbox dispatcher.
		s.subscribers = append(s.subscribers, sync)
		log.Info("team chat wired", "api", cfg.ChatAPIURL, "domain", cfg.ChatDomain, "rooms", client.Config().MUCDomain)
	}
	s.ready["chat"] = func(ctx context.Context) error {
		if !client.Config().Enabled() {
			return &routes.Informational{State: "not configured (SWITCHBOARD_CHAT_API_URL unset): chat endpoints answer 503"}
		}
		if err := client.Status(ctx); err != nil {
			return &routes.Informational{State: "unreachable: chat endpoints answer 503 until it is back"}
		}
		return nil
	}
	s.web.Chat = &routes.ChatDeps{
		Store:     st,
		Redis:     rdb,
		KeyPrefix: s.keyPrefix,
		Chat:      client,
		Queue:     queue,
		Sync:      sync,
		BaseURL:   cfg.BaseURL,
		SIPDomain: cfg.SIPDomain,
		SIPWSURL:  cfg.SIPWSURL,
		Name:      cfg.InstallationName,
	}
}

type chatCmd struct {
	Sync chatSyncCmd `cmd:"" help:"Reconcile chat rooms, accounts and memberships on ejabberd with the database, once."`
}

type chatSyncCmd struct{}

// Run reconciles every tenant's chat state on ejabberd (also done at start).
func (chatSyncCmd) Run(rc *runCtx) error {
	return withStore(rc.ctx, rc.env, func(cfg Config, st *models.Store) error {
		client := chatClient(cfg)
		if !client.Config().Enabled() {
			return fmt.Errorf("chat sync: SWITCHBOARD_CHAT_API_URL and SWITCHBOARD_CHAT_DOMAIN are not set")
		}
		st.SetChatMUCDomain(client.Config().MUCDomain)
		// What the sync could not repair (an account ejabberd lost: only a
		// hash of its password is kept) is reported on stderr.
		log := slog.New(slog.NewTextHandler(rc.env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if err := chat.NewSync(client, st, log).All(rc.ctx); err != nil {
			return fmt.Errorf("chat sync: %w", err)
		}
		fmt.Fprintln(rc.env.Stdout, "chat server is in sync")
		return nil
	})
}

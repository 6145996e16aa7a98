package app

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/comms/chat"
	"github.com/switchboard/switchboard/internal/comms/messaging"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/egress"
)

// newMessagingService wires SMS and WhatsApp: the send and status routes,
// the provider callbacks, and the outbox worker (every replica runs one;
// leases keep each message to one sender).
func newMessagingService(ctx context.Context, s *services, cfg Config, st *models.Store, rdb redis.UniversalClient, log *slog.Logger) {
	svc := messaging.New(st, rdb, messaging.Config{
		BaseURL: cfg.BaseURL,
		Providers: messaging.Providers{
			Twilio: cfg.TwilioURL, Meta: cfg.MetaURL,
			Client: egress.NewClient(egress.Options{Guard: cfg.Egress.Guard(), MaxBody: 1 << 16}),
			Hosts:  cfg.Egress.Hosts,
		},
		Logger:    log.With("component", "messaging"),
		Replica:   replicaID(),
		KeyPrefix: s.keyPrefix,
		Group:     cfg.OutboxGroup,
		Inbound:   inboundDeliverers(cfg, s.chatQueue),
	})
	st.SetProviderHosts(cfg.Egress.Hosts) // checked when channels are written
	st.OnCommit(svc.Committed)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); svc.Run(runCtx) }()
	s.stops = append(s.stops, func() { cancel(); wg.Wait() })
	s.web.Messaging = svc
}

// inboundDeliverers route received SMS and WhatsApp messages: into a chat
// channel (the room, with the sender's number as the sender name) when a
// chat server is configured, through the chat queue like every channel
// message. The messaging worker retries a chat server outage until the
// queue takes the post; a channel that is gone or archived ends the
// delivery (the message stays stored with the reason).
func inboundDeliverers(cfg Config, queue *chat.Queue) map[string]messaging.InboundDeliverer {
	if queue == nil || !chatClient(cfg).Config().Enabled() {
		return nil
	}
	return map[string]messaging.InboundDeliverer{
		"chat_channel": messaging.InboundFunc(func(ctx context.Context, d messaging.InboundDelivery) error {
			err := queue.PostToChannel(ctx, d.Tenant, d.Destination.Target, chat.ChannelMessage{
				Body: d.Body, FromName: d.From, ID: "sb-msg-" + strconv.FormatInt(d.MessageID, 10),
			})
			switch {
			case errors.Is(err, chat.ErrNoChannel) || errors.Is(err, chat.ErrArchived):
				return &messaging.SendError{Code: "chat_channel_unavailable", Message: "the chat channel is gone or archived", Detail: err.Error()}
			case err != nil:
				return &messaging.SendError{Transient: true, Code: "chat_unavailable", Message: "the chat server could not take the message", Detail: err.Error()}
			}
			return nil
		}),
	}
}

package messaging

import (
	"context"
)

// InboundDelivery is one received message on its way to its channel's
// inbound_destination.
type InboundDelivery struct {
	MessageID   int64
	Tenant      string
	ChannelID   int64
	ChannelName string
	Destination Destination
	From, To    string // E.164 when the number could be read
	Body        string
}

// InboundDeliverer hands received messages to one kind of destination
// (Config.Inbound, keyed by the destination type). A *SendError that is
// not Transient is final (the destination is gone); any other error is
// retried with backoff until it succeeds.
type InboundDeliverer interface {
	DeliverInbound(ctx context.Context, d InboundDelivery) error
}

// InboundFunc adapts a function to InboundDeliverer.
type InboundFunc func(ctx context.Context, d InboundDelivery) error

// DeliverInbound calls f.
func (f InboundFunc) DeliverInbound(ctx context.Context, d InboundDelivery) error { return f(ctx, d) }

// inboundDeliverer is the deliverer for a channel's destination, or nil.
func (s *Service) inboundDeliverer(ch *Channel) InboundDeliverer {
	if ch.Inbound == nil || ch.Inbound.Target == "" {
		return nil
	}
	return s.cfg.Inbound[ch.Inbound.Type]
}

// deliverInbound hands one claimed inbound message to its destination.
// Inbound messages are not rate limited (the provider already delivered
// them) and are retried for as long as the destination is unavailable.
func (s *Service) deliverInbound(ctx context.Context, c claimed) outcome {
	ch, err := s.channels.get(ctx, c.ChannelID)
	if err != nil {
		if isNotFound(err) {
			return outcome{c: c, inbound: true, err: &SendError{Code: "channel_deleted", Message: "the messaging channel was deleted before delivery"}}
		}
		return s.retryOutcome(c, &SendError{Transient: true, Code: "channel_lookup", Message: "the messaging channel could not be read", Detail: err.Error()})
	}
	dl := s.inboundDeliverer(ch)
	if dl == nil {
		return outcome{c: c, inbound: true, err: &SendError{Code: "no_inbound_destination", Message: "the channel's inbound_destination was removed before delivery"}}
	}
	err = dl.DeliverInbound(ctx, InboundDelivery{
		MessageID: c.ID, Tenant: ch.Tenant, ChannelID: ch.ID, ChannelName: ch.Name,
		Destination: *ch.Inbound, From: c.From, To: c.To, Body: c.Body,
	})
	if err == nil {
		return outcome{c: c, inbound: true}
	}
	se := asSendError(err)
	if se.Transient {
		// However long the destination is down, the message waits (no
		// attempt limit; the delay stops growing at BackoffMax).
		return s.retryOutcome(c, se)
	}
	return outcome{c: c, inbound: true, err: se}
}

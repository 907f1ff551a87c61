package sdk

import (
	"context"
	"sync"
)

// Broadcaster fans resource changes out to every watching host stream. A
// provider with resources embeds one (or holds one and forwards
// WatchResources to it) and calls Publish after each committed change.
//
// Watch announces itself with a Ready event once registered, so the host
// can acknowledge a subscription knowing no later change will be missed.
type Broadcaster struct {
	mu   sync.Mutex
	subs map[chan<- ResourceChange]struct{}
}

// Publish sends a change to every current watcher. It never blocks on a
// slow watcher for long: each watcher channel is buffered by the SDK.
func (b *Broadcaster) Publish(c ResourceChange) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- c:
		default:
			// The host is not draining; dropping beats wedging a
			// mutation. Subscribers re-read the resource anyway.
		}
	}
}

// WatchResources implements Provider.WatchResources.
func (b *Broadcaster) WatchResources(ctx context.Context, ch chan<- ResourceChange) error {
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[chan<- ResourceChange]struct{}{}
	}
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	}()
	select {
	case ch <- ResourceChange{Ready: true}:
	case <-ctx.Done():
		return ctx.Err()
	}
	<-ctx.Done()
	return ctx.Err()
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// Resource subscriptions of both generations share one mechanism: a watch
// stream per resource-owning provider, opened on the first subscription
// and kept (re-opened if the provider restarts) for the process lifetime.
// Each change is matched against the legacy subscription set and every
// open modern listen stream.

// MaxSubscriptions bounds the resource subscriptions one connection may
// hold: legacy resources/subscribe URIs plus the URIs of every open
// subscriptions/listen stream together. Each costs memory for the life of
// the session, so an unbounded set lets one client exhaust the host.
const MaxSubscriptions = 256

// subscriptions is the per-connection subscription state.
type subscriptions struct {
	mu      sync.Mutex
	legacy  map[string]bool         // normalized URI
	listens map[jsonrpc2.ID]*listen // open subscriptions/listen requests
	// kept are the provider-kept tasks a 2025-11-25 session follows (it
	// created them), by id; gone marks a session that ended (follow.go).
	kept map[string]*follower
	gone bool
}

type listen struct {
	subID json.RawMessage // the listen request's id, as the client sent it
	uris  map[string]bool
	tasks map[string]bool // task ids whose notifications/tasks it receives
}

type watch struct {
	ready chan struct{} // closed when the provider confirmed registration
	once  sync.Once
}

// held counts the subscriptions the connection holds; subs.mu must be held.
func (subs *subscriptions) held() int {
	n := len(subs.legacy)
	for _, l := range subs.listens {
		n += len(l.uris)
	}
	return n
}

// subscriptionLimit is the refusal for a subscription over MaxSubscriptions;
// howToFree says what the client must end first.
func subscriptionLimit(held, asked int, howToFree string) *rpcError {
	return errorf(codeInvalidParams, map[string]any{
		"limit":   MaxSubscriptions,
		"held":    held,
		"asked":   asked,
		"details": fmt.Sprintf("subscription limit reached: a session may hold at most %d resource subscriptions and holds %d; %s first", MaxSubscriptions, held, howToFree),
	}, "Subscription limit reached: at most %d resource subscriptions per session (%d held, %d more asked); %s first",
		MaxSubscriptions, held, asked, howToFree)
}

func newSubscriptions() *subscriptions {
	return &subscriptions{legacy: map[string]bool{}, listens: map[jsonrpc2.ID]*listen{}, kept: map[string]*follower{}}
}

// normalizeURI makes equivalent query spellings compare equal
// ("a%20b" and "a+b", parameter order), so a subscription matches the
// change a provider reports however either side escaped it.
func normalizeURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.RawQuery == "" {
		return uri
	}
	u.RawQuery = u.Query().Encode()
	return u.String()
}

// watchReadyTimeout bounds how long a subscribe waits for a provider that
// never confirms its watch (a hand-written provider without Ready).
const watchReadyTimeout = 3 * time.Second

// ensureWatch starts the provider's change stream if needed and waits
// until the provider has registered it, so a change committed after the
// subscription is acknowledged cannot be missed.
func (s *Server) ensureWatch(ctx context.Context, provider string) {
	s.mu.Lock()
	w, ok := s.watches[provider]
	if !ok {
		w = &watch{ready: make(chan struct{})}
		s.watches[provider] = w
		go s.runWatch(provider, w)
	}
	s.mu.Unlock()
	select {
	case <-w.ready:
	case <-ctx.Done():
	case <-time.After(watchReadyTimeout):
		s.log.Warn("provider did not confirm its resource watch", "provider", provider)
	}
}

func (s *Server) runWatch(provider string, w *watch) {
	backoff := 100 * time.Millisecond
	for s.ctx.Err() == nil {
		err := s.opts.Providers.WatchResources(s.ctx, provider, func(ev wire.ResourceChange) {
			if ev.Ready {
				w.once.Do(func() { close(w.ready) })
				backoff = 100 * time.Millisecond
				return
			}
			if ev.URI != "" {
				s.resourceChanged(ev.URI)
			}
		})
		if errors.Is(err, wire.ErrNotImplemented) {
			s.log.Warn("provider has resources but no change events", "provider", provider)
			w.once.Do(func() { close(w.ready) })
			return
		}
		if s.ctx.Err() != nil {
			return
		}
		s.log.Debug("resource watch ended; reopening", "provider", provider, "err", err)
		select {
		case <-time.After(backoff):
		case <-s.ctx.Done():
			return
		}
		if backoff < 2*time.Second {
			backoff *= 2
		}
	}
}

// resourceChanged tells every session of a change; each notifies its own
// subscribers.
func (s *Server) resourceChanged(uri string) {
	for _, sess := range s.sessionList() {
		sess.resourceChanged(uri)
	}
}

// sessionList is a snapshot of the open sessions, so a notification goes
// out without holding s.mu.
func (s *Server) sessionList() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	sessions := make([]*Session, 0, len(s.sessions))
	for sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	return sessions
}

// resourceChanged notifies this session's subscribers of uri, once per
// subscription.
func (sess *Session) resourceChanged(uri string) {
	key := normalizeURI(uri)
	sess.subs.mu.Lock()
	legacy := sess.subs.legacy[key]
	type tag struct {
		id    jsonrpc2.ID
		subID json.RawMessage
	}
	var tagged []tag
	for id, l := range sess.subs.listens {
		if l.uris[key] {
			tagged = append(tagged, tag{id, l.subID})
		}
	}
	sess.subs.mu.Unlock()
	if legacy {
		sess.notify("notifications/resources/updated", map[string]any{"uri": uri})
	}
	for _, tg := range tagged {
		sess.notifyFor(&tg.id, "notifications/resources/updated", map[string]any{
			"uri": uri, "_meta": map[string]any{metaSubscriptionID: tg.subID},
		})
	}
}

const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

func (s *Server) subscribeURI(p params) (string, string, error) {
	var uri string
	if raw, ok := p["uri"]; !ok || json.Unmarshal(raw, &uri) != nil || uri == "" {
		return "", "", invalidParams("params.uri must be a non-empty string")
	}
	owner, ok := s.resourceOwner(uri)
	if !ok {
		return "", "", errorf(codeResourceNotFound, map[string]any{"uri": uri}, "Resource not found")
	}
	return uri, owner, nil
}

func (sess *Session) resourcesSubscribe(ctx context.Context, p params, on bool) (json.RawMessage, error) {
	s := sess.srv
	uri, owner, err := s.subscribeURI(p)
	if err != nil {
		return nil, err
	}
	key := normalizeURI(uri)
	if !on {
		sess.subs.mu.Lock()
		delete(sess.subs.legacy, key)
		sess.subs.mu.Unlock()
		return json.RawMessage(`{}`), nil
	}
	// Check before starting a watch, so a refused subscribe changes nothing.
	sess.subs.mu.Lock()
	if held := sess.subs.held(); !sess.subs.legacy[key] && held >= MaxSubscriptions {
		sess.subs.mu.Unlock()
		return nil, subscriptionLimit(held, 1, "call resources/unsubscribe for a URI you no longer need")
	}
	sess.subs.mu.Unlock()
	s.ensureWatch(ctx, owner)
	sess.subs.mu.Lock()
	defer sess.subs.mu.Unlock()
	if held := sess.subs.held(); !sess.subs.legacy[key] && held >= MaxSubscriptions {
		// Another request filled the last slot while the watch started.
		return nil, subscriptionLimit(held, 1, "call resources/unsubscribe for a URI you no longer need")
	}
	sess.subs.legacy[key] = true
	return json.RawMessage(`{}`), nil
}

// subscriptionsListen serves a modern listen stream: acknowledge the
// honoured subscriptions first, then deliver tagged notifications until the
// client cancels the request.
func (sess *Session) subscriptionsListen(ctx context.Context, id jsonrpc2.ID, g generation, p params) (json.RawMessage, error) {
	s := sess.srv
	var req struct {
		Notifications *struct {
			ResourceSubscriptions []string  `json:"resourceSubscriptions"`
			TaskIDs               *[]string `json:"taskIds"`
		} `json:"notifications"`
	}
	raw, _ := json.Marshal(p)
	if err := json.Unmarshal(raw, &req); err != nil || req.Notifications == nil {
		return nil, invalidParams("params.notifications must be an object")
	}
	subID := sess.originalID(id)
	l := &listen{subID: subID, uris: map[string]bool{}, tasks: map[string]bool{}}
	var (
		taskIDs []string
		kept    []*follower // provider-kept tasks followed by polling (follow.go)
		ended   []*hostTask // provider-kept tasks already terminal: sent once after the ack
	)
	defer func() {
		for _, f := range kept {
			s.unfollowKept(f)
		}
	}()
	if req.Notifications.TaskIDs != nil {
		if err := tasksGate(g, "subscriptions/listen with notifications.taskIds"); err != nil {
			return nil, err
		}
		rq := &request{sess: sess, gen: g, id: id, ctx: ctx}
		_, keepers := s.opts.Providers.(taskKeepers)
		asked := 0
		taskIDs = []string{}
		for _, tid := range *req.Notifications.TaskIDs {
			if l.tasks[tid] {
				continue
			}
			t := s.tasks.get(tid)
			if t != nil && t.provider == "" {
				if t.visible(rq) {
					l.tasks[tid] = true
					taskIDs = append(taskIDs, tid)
				}
				continue
			}
			// A provider-kept task (or an id the host does not hold, as
			// after a restart): followed by polling, if the caller may
			// see it. At most maxKeptPollers ids a stream are looked up,
			// so one listen cannot make the host ask without bound.
			if !keepers || asked >= maxKeptPollers {
				continue
			}
			asked++
			actx, cancel := context.WithTimeout(ctx, keptAskTimeout)
			snap, err := s.findTask(actx, rq, tid, false)
			cancel()
			if err != nil || snap.provider == "" {
				continue
			}
			if terminal(snap.status) {
				ended = append(ended, snap)
			} else {
				f := &follower{sess: sess, listen: &id, subID: subID, gen: g}
				if !s.followKept(f, snap) {
					continue // over maxKeptPollers: not acknowledged
				}
				kept = append(kept, f)
			}
			l.tasks[tid] = true
			taskIDs = append(taskIDs, tid)
		}
	}
	var honoured []string
	owners := map[string]bool{}
	for _, uri := range req.Notifications.ResourceSubscriptions {
		owner, ok := s.resourceOwner(uri)
		if !ok {
			continue // only what the server honours is acknowledged
		}
		owners[owner] = true
		if !l.uris[normalizeURI(uri)] {
			l.uris[normalizeURI(uri)] = true
			honoured = append(honoured, uri)
		}
	}
	const freeListen = "end a subscriptions/listen you no longer need (notifications/cancelled with its request id) or ask for fewer URIs"
	sess.subs.mu.Lock()
	held := sess.subs.held()
	sess.subs.mu.Unlock()
	if held+len(l.uris) > MaxSubscriptions {
		return nil, subscriptionLimit(held, len(l.uris), freeListen)
	}
	names := make([]string, 0, len(owners))
	for o := range owners {
		names = append(names, o)
	}
	sort.Strings(names)
	for _, o := range names {
		s.ensureWatch(ctx, o)
	}
	if honoured == nil {
		honoured = []string{}
	}
	// Register before acknowledging, and acknowledge before anything else
	// for this subscription can be sent.
	sess.subs.mu.Lock()
	if held := sess.subs.held(); held+len(l.uris) > MaxSubscriptions {
		sess.subs.mu.Unlock()
		return nil, subscriptionLimit(held, len(l.uris), freeListen)
	}
	sess.subs.listens[id] = l
	sess.subs.mu.Unlock()
	defer func() {
		sess.subs.mu.Lock()
		delete(sess.subs.listens, id)
		sess.subs.mu.Unlock()
	}()
	ack := map[string]any{"resourceSubscriptions": honoured}
	if taskIDs != nil {
		ack["taskIds"] = taskIDs
	}
	sess.notifyFor(&id, "notifications/subscriptions/acknowledged", map[string]any{
		"_meta":         map[string]any{metaSubscriptionID: subID},
		"notifications": ack,
	})
	for _, f := range kept {
		f.markReady()
	}
	for _, snap := range ended {
		// It ended before the stream opened: say so once, as a change
		// the client may have missed.
		params := snap.view(true, true)
		params["_meta"] = map[string]any{metaSubscriptionID: subID}
		sess.notifyFor(&id, "notifications/tasks", params)
	}
	<-ctx.Done()
	// Ended by notifications/cancelled (no reply is sent for a cancelled
	// request) or by the connection closing.
	return nil, ctx.Err()
}

// taskChanged sends notifications/tasks, the task's full state, on every
// listen stream of this session that named the task.
func (sess *Session) taskChanged(t *hostTask) {
	sess.subs.mu.Lock()
	type tag struct {
		id    jsonrpc2.ID
		subID json.RawMessage
	}
	var tagged []tag
	for id, l := range sess.subs.listens {
		if l.tasks[t.id] {
			tagged = append(tagged, tag{id, l.subID})
		}
	}
	sess.subs.mu.Unlock()
	if len(tagged) == 0 {
		return
	}
	for _, tg := range tagged {
		params := t.view(true, true)
		params["_meta"] = map[string]any{metaSubscriptionID: tg.subID}
		sess.notifyFor(&tg.id, "notifications/tasks", params)
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// Following provider-kept tasks. The host learns of a host-run task's
// changes as they happen; a provider-kept task (a proposal waiting for a
// person, say) changes where the provider keeps it, and the host hears of
// it only when it asks. So while some listen stream (2026-07-28) or
// 2025-11-25 session follows such a task, one poller per task asks the
// provider every keptPoll, through findTask (the routing entry and the
// ownership rule of tasks/get), and sends the task to every follower whose
// last known status or status message differs. It stops after a terminal
// status has reached every follower, when the last follower goes, when
// the provider no longer knows the task, or when the server closes.

// keptPoll is how often a followed provider-kept task is asked for: the
// proposals provider answers from the approval gateway over loopback, so
// a person's decision reaches the agent within about this long for the
// cost of one small local request.
const keptPoll = 2 * time.Second

// maxKeptPollers bounds the provider-kept tasks followed at once,
// server-wide (a task followed by both generations counts twice). An id
// over the bound is left out of the listen acknowledgement's taskIds and
// can still be polled with tasks/get.
const maxKeptPollers = 64

// keptAskTimeout bounds one question to the provider for a follow.
const keptAskTimeout = 10 * time.Second

// followKey names a poller: the task, and the generation its followers
// speak (a completed task's result is rendered per generation).
type followKey struct {
	id     string
	modern bool
}

// follower is one listen stream, or one 2025-11-25 session, told of a
// provider-kept task's changes.
type follower struct {
	sess   *Session
	listen *jsonrpc2.ID    // the listen request; nil for a 2025-11-25 session
	subID  json.RawMessage // the listen's subscription id, as the client sent it
	gen    generation      // the follower's, for the provider question and the rendering
	p      *keptPoller     // the poller it belongs to, once following
	once   sync.Once       // unfollowKept runs once

	// Guarded by p.mu.
	ready  bool   // acknowledged: notifications may follow
	status string // the last state the follower knows
	msg    string // and its status message
}

// keptPoller asks for one provider-kept task while someone follows it.
type keptPoller struct {
	key  followKey
	stop chan struct{} // closed when the last follower went

	mu        sync.Mutex
	followers map[*follower]struct{}
}

// keptFollows is the server's table of pollers.
type keptFollows struct {
	mu      sync.Mutex
	pollers map[followKey]*keptPoller
	every   time.Duration // keptPoll; tests shorten it
}

// followKept makes f a follower of the provider-kept task snap (which f's
// caller may see: findTask said so), starting its poller when none runs.
// It reports false, following nothing, when maxKeptPollers already run.
// f receives nothing until markReady.
func (s *Server) followKept(f *follower, snap *hostTask) bool {
	key := followKey{id: snap.id, modern: f.gen.modern}
	f.status, f.msg = snap.status, snap.message
	s.kept.mu.Lock()
	defer s.kept.mu.Unlock()
	p := s.kept.pollers[key]
	if p == nil {
		if len(s.kept.pollers) >= maxKeptPollers || s.ctx.Err() != nil {
			return false
		}
		p = &keptPoller{key: key, stop: make(chan struct{}), followers: map[*follower]struct{}{}}
		s.kept.pollers[key] = p
		go s.runKeptPoller(p)
	}
	p.mu.Lock()
	p.followers[f] = struct{}{}
	p.mu.Unlock()
	f.p = p
	return true
}

// markReady lets f receive notifications: its acknowledgement is out.
func (f *follower) markReady() {
	f.p.mu.Lock()
	f.ready = true
	f.p.mu.Unlock()
}

// unfollowKept removes f; the last follower stops the poller.
func (s *Server) unfollowKept(f *follower) {
	if f.p == nil {
		return
	}
	f.once.Do(func() {
		p := f.p
		s.kept.mu.Lock()
		defer s.kept.mu.Unlock()
		p.mu.Lock()
		delete(p.followers, f)
		empty := len(p.followers) == 0
		p.mu.Unlock()
		if empty && s.kept.pollers[p.key] == p {
			delete(s.kept.pollers, p.key)
			close(p.stop)
		}
	})
}

// dropPoller forgets p after it stopped on its own.
func (s *Server) dropPoller(p *keptPoller) {
	s.kept.mu.Lock()
	if s.kept.pollers[p.key] == p {
		delete(s.kept.pollers, p.key)
	}
	s.kept.mu.Unlock()
}

// keptPollers is how many pollers run (for tests).
func (s *Server) keptPollers() int {
	s.kept.mu.Lock()
	defer s.kept.mu.Unlock()
	return len(s.kept.pollers)
}

func (s *Server) runKeptPoller(p *keptPoller) {
	tick := time.NewTicker(s.kept.every)
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			s.dropPoller(p)
			return
		case <-p.stop:
			return
		case <-tick.C:
		}
		if !s.pollKept(p) {
			s.dropPoller(p)
			return
		}
	}
}

// pollKept asks the provider once and tells the followers; it reports
// false when the poller is done.
func (s *Server) pollKept(p *keptPoller) bool {
	p.mu.Lock()
	var asker *follower
	for f := range p.followers {
		if asker == nil || (f.ready && !asker.ready) {
			asker = f
		}
	}
	p.mu.Unlock()
	if asker == nil {
		return false
	}
	// The follower's own identity: the provider sees who asks, and the
	// routing entry's ownership rule holds as for tasks/get.
	ctx, cancel := context.WithTimeout(s.ctx, keptAskTimeout)
	defer cancel()
	rq := &request{sess: asker.sess, gen: asker.gen, ctx: ctx}
	if asker.listen != nil {
		rq.id = *asker.listen
	}
	snap, err := s.findTask(ctx, rq, p.key.id, false)
	if err != nil {
		var re *rpcError
		if errors.As(err, &re) && re.Code == codeInvalidParams {
			// Expired, or the provider forgot it: nothing more will come.
			s.log.Debug("followed task is no longer known", "task", p.key.id)
			return false
		}
		s.log.Debug("asking for a followed task failed; asking again later", "task", p.key.id, "err", err)
		return true
	}
	type send struct {
		f      *follower
		params map[string]any
	}
	var out []send
	done := terminal(snap.status)
	p.mu.Lock()
	for f := range p.followers {
		if !f.ready {
			done = false
			continue
		}
		if f.status == snap.status && f.msg == snap.message {
			continue
		}
		f.status, f.msg = snap.status, snap.message
		out = append(out, send{f, renderFollowed(f, snap)})
	}
	p.mu.Unlock()
	// Only this goroutine sends for p, so each follower gets the states in
	// the order they were seen; none is sent under a lock.
	for _, o := range out {
		o.f.deliver(o.params)
	}
	return !done
}

// renderFollowed is snap as f's generation notifies it.
func renderFollowed(f *follower, snap *hostTask) map[string]any {
	if f.listen == nil {
		return snap.view(false, false)
	}
	v := snap.view(true, true)
	v["_meta"] = map[string]any{metaSubscriptionID: f.subID}
	return v
}

// deliver sends one rendered state to f.
func (f *follower) deliver(params map[string]any) {
	if f.listen == nil {
		f.sess.notify("notifications/tasks/status", params)
		return
	}
	f.sess.notifyFor(f.listen, "notifications/tasks", params)
}

// followCreated makes a 2025-11-25 session that created a provider-kept
// task its follower, as it is of the tasks the host runs; the session's
// end unfollows it. Over maxKeptPollers the task is only polled.
func (s *Server) followCreated(rq *request, view *hostTask) {
	sess := rq.sess
	if sess == nil || rq.gen.modern || terminal(view.status) {
		return
	}
	sess.subs.mu.Lock()
	if sess.subs.gone || sess.subs.kept[view.id] != nil {
		sess.subs.mu.Unlock()
		return
	}
	f := &follower{sess: sess, gen: rq.gen, ready: true}
	if !s.followKept(f, view) {
		sess.subs.mu.Unlock()
		return
	}
	sess.subs.kept[view.id] = f
	sess.subs.mu.Unlock()
}

// unfollowSession ends the follows of a session that ended.
func (s *Server) unfollowSession(sess *Session) {
	sess.subs.mu.Lock()
	sess.subs.gone = true
	kept := sess.subs.kept
	sess.subs.kept = map[string]*follower{}
	sess.subs.mu.Unlock()
	for _, f := range kept {
		s.unfollowKept(f)
	}
}

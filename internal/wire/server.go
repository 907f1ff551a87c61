package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Handler is the provider side of the service. plugins/sdk implements it
// by adapting a public Provider; Register serves it.
//
// Errors: a *Failure (errors.As) reaches the host as that failure;
// ErrNotImplemented as ErrNotImplemented; anything else, and a panic, as
// an internal gRPC status, which the host treats as a broken provider.
type Handler interface {
	Describe(ctx context.Context) (*Description, error)
	// Call runs one tool. Events go through s, in order, before the
	// result; s stops accepting events once Call returns.
	Call(ctx context.Context, call *Call, s *Stream) (*Result, error)
	ReadResource(ctx context.Context, uri string, meta Meta) (*Resource, error)
	// WatchResources sends a Ready change once registered, then a change
	// per committed modification, until ctx ends.
	WatchResources(ctx context.Context, changes chan<- ResourceChange) error
	GetPrompt(ctx context.Context, req *PromptRequest) (*PromptResult, error)
	Complete(ctx context.Context, req *CompleteRequest) (*Completion, error)
}

// Frames and envelopes on the wire. A Call stream carries any number of
// event frames, then exactly one frame with Result or Failure.
type (
	callFrame struct {
		Event   *Event   `json:"event,omitempty"`
		Result  *Result  `json:"result,omitempty"`
		Failure *Failure `json:"failure,omitempty"`
	}
	// reply is a unary answer: the value, or a failure of a kind the host
	// maps. Transport and internal errors travel as gRPC statuses instead.
	reply[T any] struct {
		Value   *T       `json:"value,omitempty"`
		Failure *Failure `json:"failure,omitempty"`
	}
	describeRequest struct{}
	readRequest     struct {
		URI  string `json:"uri"`
		Meta Meta   `json:"meta"`
	}
	watchRequest struct{}
	answered     struct{}
)

// Stream is the provider's side of one call in flight: it sends the call's
// events and puts client requests to the host. It is safe for concurrent
// use.
type Stream struct {
	callID uint64
	srv    *server

	mu     sync.Mutex
	send   func(*callFrame) error
	closed bool
}

// ErrCallEnded is returned for an event emitted after its call returned.
var ErrCallEnded = errors.New("the call has already returned its result")

// Emit sends one event to the host, in order with every other event and
// before the result.
func (s *Stream) Emit(ev Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrCallEnded
	}
	if err := s.send(&callFrame{Event: &ev}); err != nil {
		return fmt.Errorf("send event: %w", err)
	}
	return nil
}

// finish sends the final frame and refuses every later event.
func (s *Stream) finish(f *callFrame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.send(f)
}

// close refuses every later event; the call ended without a final frame.
func (s *Stream) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// Request asks the host to put method to the client and waits for the
// Answer. A refused or failed request comes back as a *Failure; the wait
// ends with ctx or with the call.
func (s *Stream) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := s.Ask(ctx, []Question{{Method: method, Params: params}})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// Question is one client request of a batch put by Ask.
type Question struct {
	Method string
	Params json.RawMessage
	// Key names the question (ClientRequest.Key); empty lets the host
	// choose.
	Key string
}

// Ask puts a batch of questions to the client at once (a 2026-07-28
// client gets them in one input_required round) and waits for every
// answer, returned in the order asked. The first refused or failed
// question ends the wait with its *Failure.
func (s *Stream) Ask(ctx context.Context, qs []Question) ([]json.RawMessage, error) {
	ids := make([]uint64, len(qs))
	chans := make([]chan *Answer, len(qs))
	s.srv.mu.Lock()
	for i := range qs {
		// Request ids come from one counter per process, so the routing
		// key stays unique even if two calls in flight carried the same
		// call id.
		ids[i] = s.srv.nextRequest.Add(1)
		chans[i] = make(chan *Answer, 1)
		s.srv.pending[pendingKey{call: s.callID, request: ids[i]}] = chans[i]
	}
	s.srv.mu.Unlock()
	defer func() {
		s.srv.mu.Lock()
		for _, id := range ids {
			delete(s.srv.pending, pendingKey{call: s.callID, request: id})
		}
		s.srv.mu.Unlock()
	}()
	for i, q := range qs {
		cr := &ClientRequest{ID: ids[i], Method: q.Method, Params: q.Params, Key: q.Key, More: i < len(qs)-1}
		if err := s.Emit(Event{Request: cr}); err != nil {
			return nil, err
		}
	}
	out := make([]json.RawMessage, len(qs))
	for i, ch := range chans {
		select {
		case a := <-ch:
			if a.Failure != nil {
				return nil, a.Failure
			}
			out[i] = a.Result
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return out, nil
}

type pendingKey struct{ call, request uint64 }

// server adapts a Handler to the gRPC service and routes answers.
type server struct {
	h           Handler
	nextRequest atomic.Uint64
	mu          sync.Mutex
	pending     map[pendingKey]chan *Answer
}

// Register serves h on s.
func Register(s grpc.ServiceRegistrar, h Handler) {
	s.RegisterService(&serviceDesc, &server{h: h, pending: map[pendingKey]chan *Answer{}})
}

// serviceServer is the HandlerType of serviceDesc.
type serviceServer interface {
	describe(context.Context, *describeRequest) (*reply[Description], error)
	answer(context.Context, *Answer) (*reply[answered], error)
	readResource(context.Context, *readRequest) (*reply[Resource], error)
	getPrompt(context.Context, *PromptRequest) (*reply[PromptResult], error)
	complete(context.Context, *CompleteRequest) (*reply[Completion], error)
	getTask(context.Context, *TaskRequest) (*reply[Task], error)
	cancelTask(context.Context, *TaskRequest) (*reply[Task], error)
}

func unaryHandler[Req, Resp any](fn func(serviceServer, context.Context, *Req) (*Resp, error), method string) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := new(Req)
		if err := dec(in); err != nil {
			return nil, err
		}
		ss := srv.(serviceServer)
		if interceptor == nil {
			return fn(ss, ctx, in)
		}
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: "/" + serviceName + "/" + method}
		return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
			return fn(ss, ctx, req.(*Req))
		})
	}
}

var (
	callStream  = grpc.StreamDesc{StreamName: "Call", ServerStreams: true, Handler: callHandler}
	watchStream = grpc.StreamDesc{StreamName: "WatchResources", ServerStreams: true, Handler: watchHandler}
)

var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*serviceServer)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Describe", Handler: unaryHandler(serviceServer.describe, "Describe")},
		{MethodName: "Answer", Handler: unaryHandler(serviceServer.answer, "Answer")},
		{MethodName: "ReadResource", Handler: unaryHandler(serviceServer.readResource, "ReadResource")},
		{MethodName: "GetPrompt", Handler: unaryHandler(serviceServer.getPrompt, "GetPrompt")},
		{MethodName: "Complete", Handler: unaryHandler(serviceServer.complete, "Complete")},
		{MethodName: "GetTask", Handler: unaryHandler(serviceServer.getTask, "GetTask")},
		{MethodName: "CancelTask", Handler: unaryHandler(serviceServer.cancelTask, "CancelTask")},
	},
	Streams: []grpc.StreamDesc{callStream, watchStream},
}

// failure sorts a handler error into a failure for the host or a gRPC
// status.
func failure(ctx context.Context, err error) (*Failure, error) {
	var f *Failure
	switch {
	case errors.As(err, &f):
		return f, nil
	case errors.Is(err, ErrNotImplemented):
		return nil, status.Error(codes.Unimplemented, err.Error())
	case ctx.Err() != nil:
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return nil, status.Error(codes.Internal, err.Error())
}

// unary runs fn, turning a panic into an internal status: a panicking
// provider method must not take the process (and every warm connection to
// it) down.
func unary[T any](ctx context.Context, what string, fn func() (*T, error)) (r *reply[T], err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, status.Errorf(codes.Internal, "provider panic in %s: %v", what, p)
		}
	}()
	v, err := fn()
	if err != nil {
		f, serr := failure(ctx, err)
		if serr != nil {
			return nil, serr
		}
		return &reply[T]{Failure: f}, nil
	}
	if v == nil {
		return nil, status.Errorf(codes.Internal, "provider returned nothing for %s", what)
	}
	return &reply[T]{Value: v}, nil
}

func (s *server) describe(ctx context.Context, _ *describeRequest) (*reply[Description], error) {
	return unary(ctx, "Describe", func() (*Description, error) { return s.h.Describe(ctx) })
}

func (s *server) answer(_ context.Context, a *Answer) (*reply[answered], error) {
	k := pendingKey{call: a.CallID, request: a.RequestID}
	s.mu.Lock()
	ch, ok := s.pending[k]
	// One answer per request: a second one finds nothing waiting.
	delete(s.pending, k)
	s.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no client request %d is waiting in call %d (the call ended, or the request was cancelled or answered)", a.RequestID, a.CallID)
	}
	ch <- a // buffered for exactly this send
	return &reply[answered]{Value: &answered{}}, nil
}

func (s *server) readResource(ctx context.Context, r *readRequest) (*reply[Resource], error) {
	return unary(ctx, "ReadResource", func() (*Resource, error) { return s.h.ReadResource(ctx, r.URI, r.Meta) })
}

func (s *server) getPrompt(ctx context.Context, r *PromptRequest) (*reply[PromptResult], error) {
	return unary(ctx, "GetPrompt "+r.Name, func() (*PromptResult, error) { return s.h.GetPrompt(ctx, r) })
}

func (s *server) complete(ctx context.Context, r *CompleteRequest) (*reply[Completion], error) {
	return unary(ctx, "Complete", func() (*Completion, error) { return s.h.Complete(ctx, r) })
}

func (s *server) getTask(ctx context.Context, r *TaskRequest) (*reply[Task], error) {
	return unary(ctx, "GetTask", func() (*Task, error) {
		th, ok := s.h.(TaskHandler)
		if !ok {
			return nil, ErrNotImplemented
		}
		return th.GetTask(ctx, r)
	})
}

func (s *server) cancelTask(ctx context.Context, r *TaskRequest) (*reply[Task], error) {
	return unary(ctx, "CancelTask", func() (*Task, error) {
		th, ok := s.h.(TaskHandler)
		if !ok {
			return nil, ErrNotImplemented
		}
		return th.CancelTask(ctx, r)
	})
}

func callHandler(srv any, stream grpc.ServerStream) error {
	in := new(Call)
	if err := stream.RecvMsg(in); err != nil {
		return err
	}
	return srv.(*server).call(in, stream)
}

func (s *server) call(c *Call, stream grpc.ServerStream) (err error) {
	ctx := stream.Context()
	st := &Stream{callID: c.ID, srv: s, send: func(f *callFrame) error { return stream.SendMsg(f) }}
	defer func() {
		if p := recover(); p != nil {
			st.close()
			err = status.Errorf(codes.Internal, "provider panic in %s: %v", c.Tool, p)
		}
	}()
	res, err := s.h.Call(ctx, c, st)
	switch {
	case err != nil:
		f, serr := failure(ctx, err)
		if serr != nil {
			st.close()
			return serr
		}
		return st.finish(&callFrame{Failure: f})
	case res == nil:
		st.close()
		return status.Errorf(codes.Internal, "provider returned no result for %s", c.Tool)
	}
	return st.finish(&callFrame{Result: res})
}

func watchHandler(srv any, stream grpc.ServerStream) error {
	in := new(watchRequest)
	if err := stream.RecvMsg(in); err != nil {
		return err
	}
	return srv.(*server).watch(stream)
}

func (s *server) watch(stream grpc.ServerStream) error {
	ctx := stream.Context()
	ch := make(chan ResourceChange, 64)
	errc := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				errc <- status.Errorf(codes.Internal, "provider panic in WatchResources: %v", p)
			}
		}()
		errc <- s.h.WatchResources(ctx, ch)
	}()
	for {
		select {
		case ev := <-ch:
			if err := stream.SendMsg(&ev); err != nil {
				return err
			}
		case err := <-errc:
			if err == nil {
				return nil
			}
			_, serr := failure(ctx, err)
			if serr == nil {
				serr = status.Error(codes.Internal, err.Error())
			}
			return serr
		}
	}
}

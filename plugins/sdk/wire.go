package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
)

// The provider service is one generic gRPC service whose messages are JSON
// documents. Schemas live in the spec, not in protobuf, so a JSON codec keeps
// the wire as generic as the host: adding a tool never changes this file.
// The codec is selected per call by content-subtype, which leaves go-plugin's
// own protobuf services (health, broker, controller) untouched.

const (
	serviceName = "fluxgit.provider.v1.Provider"
	codecName   = "fluxgit-json"
)

type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return codecName }

func init() { encoding.RegisterCodec(jsonCodec{}) }

// Wire messages. They are exported only through the Provider interface.
type (
	describeRequest  struct{}
	describeResponse struct {
		Protocol int `json:"protocol"`
	}
	callResponse struct {
		Result *Result `json:"result,omitempty"`
		// ArgumentError carries *ArgumentError across the boundary; a plain
		// Go error travels as a gRPC status instead.
		ArgumentError *ArgumentError `json:"argumentError,omitempty"`
		Refused       *RefusedError  `json:"refused,omitempty"`
	}
	readRequest struct {
		URI  string `json:"uri"`
		Meta Meta   `json:"meta"`
	}
	readResponse struct {
		Resource *Resource `json:"resource,omitempty"`
		NotFound bool      `json:"notFound,omitempty"`
	}
	watchRequest struct{}
)

// wireProtocol is bumped when the message shapes change incompatibly; the
// go-plugin handshake version guards the transport, this guards the JSON.
const wireProtocol = 1

type providerServer interface {
	describe(context.Context, *describeRequest) (*describeResponse, error)
	callTool(context.Context, *Call) (*callResponse, error)
	readResource(context.Context, *readRequest) (*readResponse, error)
	watchResources(*watchRequest, grpc.ServerStream) error
}

func unaryHandler[Req any, Resp any](fn func(providerServer, context.Context, *Req) (*Resp, error), method string) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := new(Req)
		if err := dec(in); err != nil {
			return nil, err
		}
		ps := srv.(providerServer)
		if interceptor == nil {
			return fn(ps, ctx, in)
		}
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: "/" + serviceName + "/" + method}
		return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
			return fn(ps, ctx, req.(*Req))
		})
	}
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*providerServer)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Describe", Handler: unaryHandler(providerServer.describe, "Describe")},
		{MethodName: "CallTool", Handler: unaryHandler(providerServer.callTool, "CallTool")},
		{MethodName: "ReadResource", Handler: unaryHandler(providerServer.readResource, "ReadResource")},
	},
	Streams: []grpc.StreamDesc{{
		StreamName:    "WatchResources",
		ServerStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			in := new(watchRequest)
			if err := stream.RecvMsg(in); err != nil {
				return err
			}
			return srv.(providerServer).watchResources(in, stream)
		},
	}},
}

// server adapts a Provider to the gRPC service.
type server struct{ impl Provider }

func (s *server) describe(context.Context, *describeRequest) (*describeResponse, error) {
	return &describeResponse{Protocol: wireProtocol}, nil
}

func (s *server) callTool(ctx context.Context, c *Call) (resp *callResponse, err error) {
	defer func() {
		// A panicking tool must not take the provider (and every warm
		// connection to it) down; report it as an internal error instead.
		if r := recover(); r != nil {
			err = status.Errorf(codes.Internal, "provider panic in %s: %v", c.Tool, r)
		}
	}()
	res, err := s.impl.CallTool(ctx, c)
	var (
		ae *ArgumentError
		re *RefusedError
	)
	switch {
	case errors.As(err, &ae):
		return &callResponse{ArgumentError: ae}, nil
	case errors.As(err, &re):
		return &callResponse{Refused: re}, nil
	case err != nil:
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return nil, status.Error(codes.Internal, err.Error())
	case res == nil:
		return nil, status.Errorf(codes.Internal, "provider returned no result for %s", c.Tool)
	}
	return &callResponse{Result: res}, nil
}

func (s *server) readResource(ctx context.Context, r *readRequest) (*readResponse, error) {
	res, err := s.impl.ReadResource(ctx, r.URI, r.Meta)
	if errors.Is(err, ErrResourceNotFound) {
		return &readResponse{NotFound: true}, nil
	}
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &readResponse{Resource: res}, nil
}

func (s *server) watchResources(_ *watchRequest, stream grpc.ServerStream) error {
	ctx := stream.Context()
	ch := make(chan ResourceChange, 64)
	errc := make(chan error, 1)
	go func() { errc <- s.impl.WatchResources(ctx, ch) }()
	for {
		select {
		case ev := <-ch:
			if err := stream.SendMsg(&ev); err != nil {
				return err
			}
		case err := <-errc:
			if errors.Is(err, ErrNotImplemented) {
				return status.Error(codes.Unimplemented, err.Error())
			}
			return err
		}
	}
}

// Client is the host's handle on one running provider. It is safe for
// concurrent use.
type Client struct{ conn *grpc.ClientConn }

func (c *Client) invoke(ctx context.Context, method string, in, out any) error {
	return c.conn.Invoke(ctx, "/"+serviceName+"/"+method, in, out, grpc.CallContentSubtype(codecName))
}

// Describe checks that the provider speaks this wire protocol.
func (c *Client) Describe(ctx context.Context) error {
	var out describeResponse
	if err := c.invoke(ctx, "Describe", &describeRequest{}, &out); err != nil {
		return fmt.Errorf("describe provider: %w", err)
	}
	if out.Protocol != wireProtocol {
		return fmt.Errorf("provider speaks wire protocol %d, host speaks %d", out.Protocol, wireProtocol)
	}
	return nil
}

// CallTool runs a tool in the provider. An *ArgumentError return means the
// provider rejected the arguments; other errors are transport or internal
// failures and carry a gRPC status.
func (c *Client) CallTool(ctx context.Context, call *Call) (*Result, error) {
	var out callResponse
	if err := c.invoke(ctx, "CallTool", call, &out); err != nil {
		return nil, err
	}
	if out.ArgumentError != nil {
		return nil, out.ArgumentError
	}
	if out.Refused != nil {
		return nil, out.Refused
	}
	if out.Result == nil {
		return nil, status.Error(codes.Internal, "provider sent an empty result")
	}
	return out.Result, nil
}

// ReadResource reads one resource; ErrResourceNotFound when the provider
// does not know the URI.
func (c *Client) ReadResource(ctx context.Context, uri string, meta Meta) (*Resource, error) {
	var out readResponse
	if err := c.invoke(ctx, "ReadResource", &readRequest{URI: uri, Meta: meta}, &out); err != nil {
		return nil, err
	}
	if out.NotFound || out.Resource == nil {
		return nil, ErrResourceNotFound
	}
	return out.Resource, nil
}

// WatchResources streams change events into fn until ctx ends or the
// provider closes the stream. ErrNotImplemented when the provider has none.
func (c *Client) WatchResources(ctx context.Context, fn func(ResourceChange)) error {
	desc := &serviceDesc.Streams[0]
	stream, err := c.conn.NewStream(ctx, desc, "/"+serviceName+"/WatchResources", grpc.CallContentSubtype(codecName))
	if err != nil {
		return err
	}
	if err := stream.SendMsg(&watchRequest{}); err != nil {
		return err
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	for {
		var ev ResourceChange
		if err := stream.RecvMsg(&ev); err != nil {
			if status.Code(err) == codes.Unimplemented {
				return ErrNotImplemented
			}
			return err
		}
		fn(ev)
	}
}

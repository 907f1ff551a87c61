package wire

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Client is the host's handle on one running provider. It is safe for
// concurrent use. Provider failures come back as *Failure (errors.As), a
// missing optional capability as ErrNotImplemented; any other error is a
// transport or internal failure carrying a gRPC status.
type Client struct{ conn grpc.ClientConnInterface }

// NewClient wraps a connection to a provider.
func NewClient(conn grpc.ClientConnInterface) *Client { return &Client{conn: conn} }

func (c *Client) invoke(ctx context.Context, method string, in, out any) error {
	return c.conn.Invoke(ctx, "/"+serviceName+"/"+method, in, out, grpc.CallContentSubtype(codecName))
}

// unaryCall invokes a unary method and unpacks its reply.
func unaryCall[T any](ctx context.Context, c *Client, method string, in any) (*T, error) {
	var out reply[T]
	if err := c.invoke(ctx, method, in, &out); err != nil {
		return nil, clientError(err)
	}
	if out.Failure != nil {
		return nil, out.Failure
	}
	if out.Value == nil {
		return nil, status.Errorf(codes.Internal, "provider sent an empty %s reply", method)
	}
	return out.Value, nil
}

// clientError maps an Unimplemented status (the provider lacks the
// capability, or predates the method) to ErrNotImplemented.
func clientError(err error) error {
	if status.Code(err) == codes.Unimplemented {
		return ErrNotImplemented
	}
	return err
}

// Describe asks the provider what it serves and checks it speaks this
// wire protocol.
func (c *Client) Describe(ctx context.Context) (*Description, error) {
	d, err := unaryCall[Description](ctx, c, "Describe", &describeRequest{})
	if err != nil {
		return nil, fmt.Errorf("describe provider: %w", err)
	}
	if d.Protocol != Protocol {
		return nil, fmt.Errorf("provider speaks wire protocol %d, host speaks %d: rebuild the provider against the current fluxgit SDK", d.Protocol, Protocol)
	}
	return d, nil
}

// Call runs a tool. onEvent (which may be nil) receives the call's events
// in order, on the calling goroutine, all before Call returns; answer a
// ClientRequest event with Answer.
func (c *Client) Call(ctx context.Context, call *Call, onEvent func(Event)) (*Result, error) {
	// Cancelling on return releases the stream once the final frame is in.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.conn.NewStream(ctx, &callStream, "/"+serviceName+"/Call", grpc.CallContentSubtype(codecName))
	if err != nil {
		return nil, clientError(err)
	}
	if err := stream.SendMsg(call); err != nil {
		return nil, clientError(err)
	}
	if err := stream.CloseSend(); err != nil {
		return nil, clientError(err)
	}
	for {
		var f callFrame
		if err := stream.RecvMsg(&f); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, status.Errorf(codes.Internal, "provider ended call %s without a result", call.Tool)
			}
			return nil, clientError(err)
		}
		switch {
		case f.Event != nil:
			if onEvent != nil {
				onEvent(*f.Event)
			}
		case f.Failure != nil:
			return nil, f.Failure
		case f.Result != nil:
			return f.Result, nil
		default:
			return nil, status.Errorf(codes.Internal, "provider sent an empty frame for %s", call.Tool)
		}
	}
}

// Answer replies to a ClientRequest event of a call still in flight.
func (c *Client) Answer(ctx context.Context, a *Answer) error {
	_, err := unaryCall[answered](ctx, c, "Answer", a)
	return err
}

// ReadResource reads one resource; a *Failure of KindNotFound when the
// provider does not know the URI.
func (c *Client) ReadResource(ctx context.Context, uri string, meta Meta) (*Resource, error) {
	return unaryCall[Resource](ctx, c, "ReadResource", &readRequest{URI: uri, Meta: meta})
}

// GetPrompt renders a prompt the provider owns.
func (c *Client) GetPrompt(ctx context.Context, req *PromptRequest) (*PromptResult, error) {
	return unaryCall[PromptResult](ctx, c, "GetPrompt", req)
}

// Complete completes a prompt or resource-template argument.
func (c *Client) Complete(ctx context.Context, req *CompleteRequest) (*Completion, error) {
	return unaryCall[Completion](ctx, c, "Complete", req)
}

// GetTask asks the provider for a task it keeps; a *Failure of
// KindNotFound when it does not keep that id, ErrNotImplemented when it
// keeps no tasks.
func (c *Client) GetTask(ctx context.Context, req *TaskRequest) (*Task, error) {
	return unaryCall[Task](ctx, c, "GetTask", req)
}

// CancelTask asks the provider to cancel a task it keeps and returns the
// task's state afterwards.
func (c *Client) CancelTask(ctx context.Context, req *TaskRequest) (*Task, error) {
	return unaryCall[Task](ctx, c, "CancelTask", req)
}

// WatchResources streams change events into fn until ctx ends or the
// provider closes the stream. ErrNotImplemented when the provider has none.
func (c *Client) WatchResources(ctx context.Context, fn func(ResourceChange)) error {
	stream, err := c.conn.NewStream(ctx, &watchStream, "/"+serviceName+"/WatchResources", grpc.CallContentSubtype(codecName))
	if err != nil {
		return clientError(err)
	}
	if err := stream.SendMsg(&watchRequest{}); err != nil {
		return clientError(err)
	}
	if err := stream.CloseSend(); err != nil {
		return clientError(err)
	}
	for {
		var ev ResourceChange
		if err := stream.RecvMsg(&ev); err != nil {
			return clientError(err)
		}
		fn(ev)
	}
}

package httpserve

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// DefaultMaxConnections bounds the connections a listener wrapped by
// LimitListener keeps open at once. On loopback every client is 127.0.0.1,
// so a per-peer limit would mean nothing: the cap is total.
const DefaultMaxConnections = 1024

// maxRefusing bounds the connections being refused at once; beyond it a
// connection over the cap is closed without the 503.
const maxRefusing = 64

// LimitListener wraps ln so that at most max connections are open at once
// (DefaultMaxConnections when max <= 0). A connection over the cap is
// refused at once, not queued: it is answered "503 Service Unavailable"
// with Retry-After and a JSON-RPC error saying why, then closed, so a
// client sees the limit instead of hanging (docs/http.md). Slots free
// when connections close; the body, header and idle deadlines make sure
// they do.
func LimitListener(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		max = DefaultMaxConnections
	}
	return &limitListener{Listener: ln, max: max, slots: make(chan struct{}, max), refusing: make(chan struct{}, maxRefusing)}
}

type limitListener struct {
	net.Listener
	max      int
	slots    chan struct{}
	refusing chan struct{}
}

// Accept implements net.Listener.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
		}
		select {
		case l.refusing <- struct{}{}:
			go func() {
				defer func() { <-l.refusing }()
				refuseConn(c, l.max)
			}()
		default:
			_ = c.Close()
		}
	}
}

// refuseConn answers a connection over the cap and closes it. The request
// is drained briefly after the answer so that closing does not reset the
// connection before the client read the 503.
func refuseConn(c net.Conn, max int) {
	defer c.Close()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too many connections (%d, the limit); close idle connections or retry shortly"}}`+"\n", max)
	_ = c.SetDeadline(time.Now().Add(time.Second))
	_, err := io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\n\r\n"+body)
	if err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.CopyN(io.Discard, c, 64<<10)
}

// limitConn gives its slot back once, on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close implements net.Conn.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

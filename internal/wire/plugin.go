package wire

import (
	"context"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// Handshake is shared by host and providers. The cookie only stops a user
// from running a provider binary by hand by mistake; it is not security.
// Message shapes are versioned by Protocol, checked in Describe.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "FLUXGIT_PROVIDER",
	MagicCookieValue: "7f3c1e0a-fluxgit-provider",
}

// PluginName is the single plugin each provider process dispenses.
const PluginName = "provider"

// GRPCPlugin is the go-plugin adapter. Impl is nil on the host side.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Handler
}

// GRPCServer registers the provider service.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	Register(s, p.Impl)
	return nil
}

// GRPCClient returns a *Client.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return NewClient(c), nil
}

// PluginSet is what both sides hand to go-plugin (h is nil on the host).
func PluginSet(h Handler) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &GRPCPlugin{Impl: h}}
}

// Serve runs h as a provider process until the host goes away. It never
// returns normally.
func Serve(h Handler) {
	ignoreStopSignals()
	go exitWithParent()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         PluginSet(h),
		GRPCServer:      plugin.DefaultGRPCServer,
		Logger: hclog.New(&hclog.LoggerOptions{
			// go-plugin's own notes below WARN are routine (issue 22).
			Name: "provider", Output: os.Stderr, JSONFormat: true, Level: hclog.Warn,
		}),
	})
}

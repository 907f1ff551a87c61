package sdk

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// Handshake is shared by host and providers. The cookie only stops a user
// from running a provider binary by hand by mistake; it is not security.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "FLUXGIT_PROVIDER",
	MagicCookieValue: "7f3c1e0a-fluxgit-provider",
}

// PluginName is the single plugin each provider process dispenses.
const PluginName = "provider"

// GRPCPlugin is the go-plugin adapter for a Provider. Impl is nil on the
// host side.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Provider
}

// GRPCServer registers the provider service.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(&serviceDesc, &server{impl: p.Impl})
	return nil
}

// GRPCClient returns a *Client.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &Client{conn: c}, nil
}

// PluginSet is what both sides hand to go-plugin.
func PluginSet(impl Provider) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &GRPCPlugin{Impl: impl}}
}

// Logger returns the logger a provider should use: JSON lines on stderr,
// which the host re-emits on its own stderr under the provider's name.
// Providers must never write to stdout: go-plugin's handshake lives there.
func Logger(name string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      hclog.Info,
	})
}

// Serve runs the provider until the host goes away. It never returns
// normally.
func Serve(impl Provider) {
	go exitWithParent()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         PluginSet(impl),
		GRPCServer:      plugin.DefaultGRPCServer,
		Logger:          Logger("provider"),
	})
}

// exitWithParent ends the provider when its host dies. go-plugin providers
// ignore SIGINT and never read stdin, so a SIGKILLed host would otherwise
// leave them running forever. The host also sets Pdeathsig where it can;
// this watcher covers the cases Pdeathsig misses (the forking thread
// exiting, non-Linux systems, providers started by someone else's host).
func exitWithParent() {
	parent := os.Getppid()
	for range time.Tick(250 * time.Millisecond) {
		if os.Getppid() != parent {
			os.Exit(0)
		}
	}
}

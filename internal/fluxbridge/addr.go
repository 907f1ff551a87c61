// Package gateway resolves the address of the FluxGit desktop gateway (the
// "handshake bridge") from the environment. Tools use it to decide whether
// FluxGit is configured (FluxGit-required tools answer 10001 when it is
// not) and, later, where to send write proposals.
//
// Only a loopback IP literal with an explicit port is accepted: the gateway
// is a local process, and refusing host names (localhost included) means no
// resolver, hosts file or proxy can ever redirect a call off the machine.
package fluxbridge

import (
	"errors"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Variables are the environment variables consulted, in priority order.
// The first one whose value normalizes wins; an invalid value is skipped.
var Variables = []string{
	"FLUXGIT_MCP_HANDSHAKE_ADDR",
	"FLUXGIT_GATEWAY_ADDR",
	"FLUXGIT_GATEWAY_URL",
}

// Address is a normalized gateway address.
type Address struct {
	// AddrPort is the loopback IP and port.
	AddrPort netip.AddrPort
	// Variable names the environment variable the address came from.
	Variable string
}

// String renders host:port, with IPv6 in brackets: "127.0.0.1:59647",
// "[::1]:5".
func (a Address) String() string { return a.AddrPort.String() }

// BaseURL is the http URL prefix requests are sent to, without a trailing
// slash: "http://127.0.0.1:59647".
func (a Address) BaseURL() string { return "http://" + a.String() }

// Errors returned by Normalize.
var (
	ErrEmpty        = errors.New("gateway address is empty")
	ErrSyntax       = errors.New("gateway address is not a valid URL")
	ErrScheme       = errors.New("gateway address scheme must be http")
	ErrUserinfo     = errors.New("gateway address must not contain a user name or password")
	ErrExtra        = errors.New("gateway address must not have a path, query or fragment")
	ErrNotIP        = errors.New("gateway address host must be an IP literal (host names, localhost included, are refused)")
	ErrNotLoopback  = errors.New("gateway address must be a loopback address (127.0.0.0/8 or ::1)")
	ErrPortRequired = errors.New("gateway address needs an explicit port")
	ErrPort         = errors.New("gateway address port must be a number from 1 to 65535")
)

// Normalize validates one raw value ("127.0.0.1:59647",
// "http://[::1]:5/") and returns the address it names.
func Normalize(raw string) (netip.AddrPort, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return netip.AddrPort{}, ErrEmpty
	}
	for _, r := range s {
		if r < 0x21 || r == 0x7f {
			return netip.AddrPort{}, ErrSyntax
		}
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return netip.AddrPort{}, ErrSyntax
	}
	if u.Scheme != "http" {
		return netip.AddrPort{}, ErrScheme
	}
	if u.User != nil {
		return netip.AddrPort{}, ErrUserinfo
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(s[len("http://"):], "?#") {
		return netip.AddrPort{}, ErrExtra
	}
	host, port := u.Hostname(), u.Port()
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return netip.AddrPort{}, ErrNotIP
	}
	if ip.Is4In6() || !ip.IsLoopback() {
		return netip.AddrPort{}, ErrNotLoopback
	}
	if port == "" {
		return netip.AddrPort{}, ErrPortRequired
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return netip.AddrPort{}, ErrPort
	}
	return netip.AddrPortFrom(ip, uint16(n)), nil
}

// Resolve returns the first address among Variables that normalizes, read
// through getenv; ok is false when none does (the gateway is then "not
// configured").
func Resolve(getenv func(string) string) (Address, bool) {
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, v := range Variables {
		if ap, err := Normalize(getenv(v)); err == nil {
			return Address{AddrPort: ap, Variable: v}, true
		}
	}
	return Address{}, false
}

// FromEnv is Resolve over the process environment, read at call time.
func FromEnv() (Address, bool) { return Resolve(os.Getenv) }

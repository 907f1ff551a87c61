package operation

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ProposerHeader is the HTTP header the handshake provider adds to every
// preview POST: which fluxgit server process sends the proposal (its pid)
// for which MCP client (ClientLabel). It is outside the body on purpose:
// the model writes none of it, the body's schema stays the FluxGit app's,
// and a gateway that does not know the header ignores it. fluxgit's own
// gateway records it with the proposal and, when it executes a commit,
// exempts from the shift-roster guard exactly the workers that this
// process checked in for this client (roster.CheckedInBy): their leases
// are the proposer's own.
const ProposerHeader = "Fluxgit-Proposer"

// MaxProposerHeader bounds the header's value; a longer one is ignored.
const MaxProposerHeader = 1024

// Proposer is who sends a proposal, as ProposerHeader carries it.
type Proposer struct {
	// PID is the fluxgit server process (the one whose presence record is
	// <run_dir>/presence/mcp/<pid>.json and that the shift roster records
	// as its workers' agent).
	PID int `json:"pid"`
	// Client is the MCP client's label, ClientLabel(name, version).
	Client string `json:"client,omitempty"`
}

// ClientLabel is how an MCP client is recorded as a roster worker's agent
// and named in ProposerHeader: its name, then a space and its version
// when both are given.
func ClientLabel(name, version string) string {
	if name != "" && version != "" {
		return name + " " + version
	}
	return name
}

// Encode is the header value: pid=<n>&client=<label>, URL-query encoded
// so any client name travels as ASCII.
func (p Proposer) Encode() string {
	v := url.Values{"pid": {strconv.Itoa(p.PID)}}
	if p.Client != "" {
		v.Set("client", p.Client)
	}
	return v.Encode()
}

// ParseProposer reads a ProposerHeader value; ok is false for an absent,
// oversize or malformed one (a positive pid is required), which the
// gateway treats as no proposer: nobody's leases are exempted.
func ParseProposer(s string) (Proposer, bool) {
	if s == "" || len(s) > MaxProposerHeader {
		return Proposer{}, false
	}
	v, err := url.ParseQuery(s)
	if err != nil || len(v["pid"]) != 1 || len(v["client"]) > 1 {
		return Proposer{}, false
	}
	pid, err := strconv.Atoi(v.Get("pid"))
	if err != nil || pid <= 0 {
		return Proposer{}, false
	}
	c := v.Get("client")
	if !utf8.ValidString(c) || strings.ContainsAny(c, "\x00\r\n") {
		return Proposer{}, false
	}
	return Proposer{PID: pid, Client: c}, true
}

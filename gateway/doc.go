// Package gateway is fluxgit's own approval gateway: a loopback HTTP server
// that speaks the write-handshake protocol the handshake provider sends
// proposals to (README.md, "Approval gateway"), keeps every proposal in a
// durable journal, lets a person approve or reject each one in a browser
// page or the terminal, and executes approved operations with the git CLI
// behind a restore point.
//
// The tree is separate from host/: it imports nothing MCP-shaped. What it
// shares with the MCP server (the audit ledger, the run directory, the git
// executable wrapper) lives in packages both import.
//
//   - gateway/proposal: the wire contract of a proposal body (checks, the
//     refs and paths it names);
//   - gateway/policy: the declarative agent policy (FLUXGIT_MCP_AGENT_POLICY);
//   - gateway/journal: the SQLite lifecycle journal;
//   - gateway/execute: repository binding, review data for the card,
//     execution of the twelve operation types, restore points and undo;
//   - gateway/server: the HTTP endpoints, the approval page, the worker.
package gateway

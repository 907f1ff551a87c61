// Package schemas embeds the JSON Schemas (draft 2020-12) that fluxgit's data
// files must satisfy:
//
//	tool.schema.json      a tool spec file, spec/tools/<name>.yaml
//	resource.schema.json  a resource spec file, spec/resources/<name>.yaml
//	prompt.schema.json    a prompt spec file, spec/prompts/<name>.yaml
//	agent-policy.schema.json  the approval gateway's agent policy file
//	                      (FLUXGIT_MCP_AGENT_POLICY, gateway/policy)
//	operations/<op>.schema.json  the body of a write proposal of operation
//	                      <op> (internal/operation, the proposal contract)
//
// The schemas are self-contained (no $ref to other files or to the network),
// so they compile offline.
package schemas

import "embed"

// FS holds the *.schema.json files at its root, e.g. "tool.schema.json",
// and the operation body schemas under operations/, e.g.
// "operations/merge.schema.json".
//
//go:embed *.schema.json operations/*.schema.json
var FS embed.FS

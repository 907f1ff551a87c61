package rundir

import (
	"path/filepath"
	"strings"
)

// The run directory's layout (F§9: it holds repos/*.path, rebase/<id>.json,
// audit/mcp.jsonl and presence/mcp/). Every reader and writer of these
// files names them through this package, so the two ends cannot drift.
const (
	// ReposDir holds the repository registry, one <id>.path per repository.
	ReposDir = "repos"
	// RebaseDir holds the restore records, one <id>.json per repository,
	// and the patch an applied patch operation keeps for undo (<id>.patch).
	RebaseDir = "rebase"
	// PresenceSubdir holds the MCP servers' presence documents, one
	// <pid>.json per process (F§11; CONTRACT §7).
	PresenceSubdir = "presence/mcp"
	// GatewaySubdir holds the approval gateway's own state (journal, lock);
	// no read tool opens it.
	GatewaySubdir = "gateway"
	// AuditLogName is the default audit ledger, below the run directory.
	AuditLogName = "audit/mcp.jsonl"
)

// ValidID reports whether id can name a file inside the run directory: a
// repository id of the registry and of restore records (F§6.22: non-empty,
// no '/', '\' or NUL, not "." or "..").
func ValidID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\x00")
}

// RecordPath is the restore record of repository id below runDir.
func RecordPath(runDir, id string) string {
	return filepath.Join(runDir, RebaseDir, id+".json")
}

// PatchPath is the copy of an applied patch kept beside the restore record
// of repository id, so the gateway can reverse it on undo.
func PatchPath(runDir, id string) string {
	return filepath.Join(runDir, RebaseDir, PatchName(id))
}

// PatchName is the file name PatchPath uses, as the record's plan names it.
func PatchName(id string) string { return id + ".patch" }

// RegistryDir is the repository registry below runDir.
func RegistryDir(runDir string) string { return filepath.Join(runDir, ReposDir) }

// PresenceDir is where presence documents live below runDir.
func PresenceDir(runDir string) string {
	return filepath.Join(runDir, filepath.FromSlash(PresenceSubdir))
}

// GatewayDir is the approval gateway's state directory below runDir.
func GatewayDir(runDir string) string { return filepath.Join(runDir, GatewaySubdir) }

// AuditLog is the default audit ledger below runDir (F§10:
// FLUXGIT_MCP_AUDIT_LOG overrides it).
func AuditLog(runDir string) string { return filepath.Join(runDir, filepath.FromSlash(AuditLogName)) }

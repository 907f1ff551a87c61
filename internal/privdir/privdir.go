// Package privdir checks a directory that holds one user's state (the
// audit ledger, the shift roster): it must be reached without symbolic
// links, be a directory, belong to the current user and grant group and
// others none of the permission bits the caller forbids. Without this,
// another local user who can write the directory, or who planted a link on
// the way to it, could read, replace or redirect that state.
package privdir

import (
	"fmt"
	"io/fs"
)

// Problem names what is wrong with a directory.
type Problem string

// Problems Check reports.
const (
	NotAbsolute  Problem = "not_absolute"
	Symlink      Problem = "symlink"
	NotDirectory Problem = "not_directory"
	Permissive   Problem = "group_world_permissions"
	ForeignOwner Problem = "foreign_owner"
)

// Error is a directory that fails Check.
type Error struct {
	// Label says what the directory is for, e.g. "audit directory".
	Label string
	// Path is the offending path: the directory itself, or the component
	// on the way to it that is a symbolic link or not a directory.
	Path    string
	Problem Problem
	Mode    fs.FileMode // permission bits, for Permissive
	UID     uint32      // owner, for ForeignOwner
	// Forbidden are the bits Options.Forbidden named, for Permissive.
	Forbidden fs.FileMode
}

// Options say what to check and how to report it.
type Options struct {
	// Label says what the directory is for in messages, e.g. "audit
	// directory".
	Label string
	// Create makes missing components, with mode 0700; without it a
	// missing directory passes (there is nothing to protect yet).
	Create bool
	// Forbidden are permission bits the directory must not have: 0o077
	// for a directory only its owner may enter, 0o022 for one others may
	// read but never write. Zero means 0o077.
	Forbidden fs.FileMode
}

func (o Options) forbidden() fs.FileMode {
	if o.Forbidden == 0 {
		return 0o077
	}
	return o.Forbidden & 0o077
}

func (e *Error) Error() string {
	switch e.Problem {
	case NotAbsolute:
		return fmt.Sprintf("%s %s is not absolute", e.Label, e.Path)
	case Symlink:
		return fmt.Sprintf("%s is a symbolic link; the %s must be reached without symbolic links", e.Path, e.Label)
	case NotDirectory:
		return fmt.Sprintf("%s is not a directory", e.Path)
	case Permissive:
		if e.Forbidden&0o055 != 0 {
			return fmt.Sprintf("%s %s is group/world accessible (mode %04o); it must be 0700", e.Label, e.Path, e.Mode)
		}
		return fmt.Sprintf("%s %s is writable by group or others (mode %04o); only its owner may write it", e.Label, e.Path, e.Mode)
	case ForeignOwner:
		return fmt.Sprintf("%s %s is owned by uid %d, not by this user", e.Label, e.Path, e.UID)
	}
	return fmt.Sprintf("%s %s: %s", e.Label, e.Path, e.Problem)
}

// Fix is one sentence telling the user how to repair the directory.
func (e *Error) Fix() string {
	switch e.Problem {
	case NotAbsolute:
		return "Use an absolute path."
	case Symlink:
		return fmt.Sprintf("Use the real path (no symbolic links in any component), or replace the link %s with a directory.", e.Path)
	case NotDirectory:
		return fmt.Sprintf("Move %s aside or choose another directory.", e.Path)
	case Permissive:
		if e.Forbidden&0o055 != 0 {
			return fmt.Sprintf("Run chmod 700 %s.", e.Path)
		}
		return fmt.Sprintf("Run chmod go-w %s.", e.Path)
	case ForeignOwner:
		return fmt.Sprintf("Use a directory of your own; %s belongs to uid %d.", e.Path, e.UID)
	}
	return "Choose another directory."
}

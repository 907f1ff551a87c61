package rundir

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// StackVersion is the version of the restore stack file format.
const StackVersion = 1

// MaxStackPoints bounds a repository's restore stack: a new restore point
// beyond it drops the oldest (its safety stash, if any, stays in
// `git stash list`; nothing of the person's work is deleted).
const MaxStackPoints = 50

// MaxStackBytes bounds a restore stack read: MaxStackPoints records of a
// few hundred bytes each, with room for plan details.
const MaxStackBytes = 4 << 20

// Stack is the restore stack <runDir>/rebase/<repoId>.stack.json: every
// restore point the gateway took in a repository, oldest first, so a
// person can undo the newest, then the one before, and redo what they
// undid. Each point is a Record in the same snake_case keys as the
// reference's single latest-record file <repoId>.json, which the gateway
// keeps writing beside it as a copy of the stack's newest point (its
// readers — the reference's tools, the FluxGit app — see what they always
// saw). Points above the newest one not undone are the redo side: they are
// all undone, and a new restore point drops them.
type Stack struct {
	Version int      `json:"version"`
	Points  []Record `json:"points"`
}

// StackName is the file name of repository id's restore stack in RebaseDir.
func StackName(id string) string { return id + ".stack.json" }

// ReadStack reads the restore stack of repository id below runDir with the
// rules of ReadRecordFile (bounded, no symbolic link, check). A missing
// stack is an empty one; a stack in a newer format is an error that says so.
func ReadStack(runDir, id string, check Check) (Stack, error) {
	if !ValidID(id) {
		return Stack{}, ErrBadID
	}
	root, err := OpenRoot(runDir)
	if errors.Is(err, os.ErrNotExist) {
		return Stack{Version: StackVersion}, nil
	}
	if err != nil {
		return Stack{}, err
	}
	defer root.Close()
	b, _, err := ReadFile(root, RebaseDir+"/"+StackName(id), MaxStackBytes, check)
	if errors.Is(err, os.ErrNotExist) {
		return Stack{Version: StackVersion}, nil
	}
	if err != nil {
		return Stack{}, fmt.Errorf("read the restore stack %s/%s: %w", RebaseDir, StackName(id), err)
	}
	var s Stack
	if err := json.Unmarshal(b, &s); err != nil {
		return Stack{}, fmt.Errorf("the restore stack %s/%s is not valid JSON: %w", RebaseDir, StackName(id), err)
	}
	if s.Version != StackVersion {
		return Stack{}, fmt.Errorf("the restore stack %s/%s has version %d, this fluxgit reads version %d", RebaseDir, StackName(id), s.Version, StackVersion)
	}
	if len(s.Points) > MaxStackPoints {
		s.Points = s.Points[len(s.Points)-MaxStackPoints:]
	}
	return s, nil
}

// WriteStack replaces the restore stack of repository id atomically and
// durably (keeping at most MaxStackPoints, the newest), and the latest
// record <id>.json with a copy of its newest point; an empty stack removes
// both.
func WriteStack(runDir, id string, s Stack) error {
	if !ValidID(id) {
		return ErrBadID
	}
	s.Version = StackVersion
	if len(s.Points) > MaxStackPoints {
		s.Points = s.Points[len(s.Points)-MaxStackPoints:]
	}
	if len(s.Points) == 0 {
		return errors.Join(remove(runDir, RebaseDir, StackName(id)), RemoveRecord(runDir, id))
	}
	for i := range s.Points {
		if len(s.Points[i].Plan) == 0 {
			s.Points[i].Plan = json.RawMessage("null")
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode the restore stack: %w", err)
	}
	if len(b) > MaxStackBytes {
		return fmt.Errorf("the restore stack would be %d bytes, more than %d", len(b), MaxStackBytes)
	}
	if err := writeAtomic(runDir, RebaseDir, StackName(id), b, true); err != nil {
		return err
	}
	return WriteRecord(runDir, id, s.Points[len(s.Points)-1])
}

// Cursor is the index of the newest point not undone (-1 when every point
// is undone or there is none): the one Undo takes next. Cursor+1, when it
// exists, is the one Redo takes next.
func (s Stack) Cursor() int {
	for i := len(s.Points) - 1; i >= 0; i-- {
		if !s.Points[i].Undone {
			return i
		}
	}
	return -1
}

// RemoveFile deletes a file the restore stack kept beside it (a patch
// copy) named name in RebaseDir; a missing file is no error.
func RemoveFile(runDir, name string) error {
	if !ValidID(name) {
		return ErrBadID
	}
	return remove(runDir, RebaseDir, name)
}

// WritePatchFile keeps a patch under name in RebaseDir (one per restore
// point of the stack: PointPatchName), atomically and durably.
func WritePatchFile(runDir, name string, patch []byte) error {
	if !ValidID(name) {
		return ErrBadID
	}
	return writeAtomic(runDir, RebaseDir, name, patch, true)
}

// PointPatchName is a fresh name for the patch copy of one of repository
// id's restore points ("<id>.<random>.patch"): several patch points can
// sit on one stack.
func PointPatchName(id string) string {
	return id + "." + strings.ToLower(rand.Text()[:12]) + ".patch"
}

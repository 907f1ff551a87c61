package gitexec

import "testing"

func TestClassify(t *testing.T) {
	tests := []struct{ details, kind string }{
		{"fatal: not a git repository (or any of the parent directories): .git", KindNotARepository},
		{"fatal: this operation must be run in a work tree", KindNotARepository},
		{"fatal: ambiguous argument 'nope': unknown revision or path not in the working tree.", KindUnknownRevision},
		{"fatal: Needed a single revision", KindUnknownRevision},
		{"fatal: bad revision 'nope'", KindUnknownRevision},
		{`arguments.commit "nope" does not name a commit in this repository`, KindUnknownRevision},
		{"fatal: path 'x.txt' does not exist in 'HEAD'", KindMissingPath},
		{`"x.txt" does not exist at HEAD (paths are relative to the repository top level and case-sensitive)`, KindMissingPath},
		{"git command did not finish in time (limit 30s) and was killed", ""},
		{"git stdout exceeded 4194304 bytes; the command was stopped", ""},
	}
	for _, tt := range tests {
		kind, hint := Classify(tt.details)
		if kind != tt.kind || (kind == "") != (hint == "") {
			t.Errorf("Classify(%q) = %q, %q; want kind %q", tt.details, kind, hint, tt.kind)
		}
	}
}

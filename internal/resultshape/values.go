package resultshape

import "strings"

// Values accepted for Env, the default first. Unset and empty mean the
// default too.
var Values = []string{"lean", "reference"}

// Known reports whether v (spaces ignored) is a value Env accepts: empty,
// or one of Values. Anything else still selects lean, but deserves a
// warning, since it is most likely a misspelt "reference".
func Known(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return true
	}
	for _, k := range Values {
		if v == k {
			return true
		}
	}
	return false
}

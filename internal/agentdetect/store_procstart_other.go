//go:build !linux

package agentdetect

import "time"

// storeProcStart is unknown here; pid reuse is then not detected.
func storeProcStart(pid int) time.Time { return time.Time{} }

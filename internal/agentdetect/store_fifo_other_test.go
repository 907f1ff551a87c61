//go:build !unix

package agentdetect

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this system") }

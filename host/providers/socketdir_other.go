//go:build !unix

package providers

import "time"

// SocketDir is empty where go-plugin uses loopback TCP instead of unix
// sockets (Windows): nothing is left in the file system.
func SocketDir() string { return "" }

func prepareSocketDir(time.Time) (string, error) { return "", nil }

func removeStaleSockets(string, time.Time) int { return 0 }

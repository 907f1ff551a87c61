package providers

import "github.com/hashicorp/go-hclog"

// pluginLogger is the logger go-plugin gets for one provider. go-plugin
// reports its own routine lifecycle at INFO ("plugin process exited" at
// every shutdown), which a user reads as news on every run (issue 22);
// those become DEBUG. Its warnings and errors (a provider that crashed,
// failed to exit gracefully) keep their level. The provider's own log
// lines, which go-plugin re-emits through Named loggers, are left alone:
// they carry the level the provider gave them and the host's level
// filters them.
type pluginLogger struct{ hclog.Logger }

// Info implements hclog.Logger: go-plugin's INFO is routine.
func (l pluginLogger) Info(msg string, args ...any) { l.Logger.Debug(msg, args...) }

// Log implements hclog.Logger.
func (l pluginLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Info {
		level = hclog.Debug
	}
	l.Logger.Log(level, msg, args...)
}

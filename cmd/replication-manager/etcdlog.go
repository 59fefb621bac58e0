package main

import (
	"context"
	"log/slog"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// etcdLogger routes the zap logs of the embedded etcd and of the etcd
// client into the daemon's slog logger, at warn and above, so that one
// --log-format covers everything.
// Quiet() drops everything from then on: etcd reports its own clean
// shutdown as errors.
type etcdLogger struct {
	logger *slog.Logger
	quiet  atomic.Bool
}

func newEtcdLogger(logger *slog.Logger) *etcdLogger {
	return &etcdLogger{logger: logger.With("component", "etcd")}
}

// Zap returns the zap logger to give etcd.
func (l *etcdLogger) Zap() *zap.Logger { return zap.New(&slogCore{parent: l}) }

// Quiet stops forwarding; call it before closing etcd.
func (l *etcdLogger) Quiet() { l.quiet.Store(true) }

// slogCore is a zapcore.Core that writes to slog.
type slogCore struct {
	parent *etcdLogger
	fields []zapcore.Field
}

func (c *slogCore) Enabled(lvl zapcore.Level) bool {
	return lvl >= zapcore.WarnLevel && !c.parent.quiet.Load()
}

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{parent: c.parent, fields: append(append([]zapcore.Field(nil), c.fields...), fields...)}
}

// expectedWarnings are etcd warnings about choices the daemon makes on
// purpose; repeating them on every start would only teach people to ignore
// warnings.
var expectedWarnings = map[string]bool{
	// the embedded etcd is one member serving one host on one client port
	"Running http and grpc server on single port. This is not recommended for production.": true,
	// the embedded etcd runs without auth, so its token type does not matter
	"simple token is not cryptographically signed": true,
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) && !expectedWarnings[e.Message] {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range append(append([]zapcore.Field(nil), c.fields...), fields...) {
		f.AddTo(enc)
	}
	attrs := make([]slog.Attr, 0, len(enc.Fields))
	for k, v := range enc.Fields {
		attrs = append(attrs, slog.Any(k, v))
	}
	level := slog.LevelWarn
	if e.Level >= zapcore.ErrorLevel {
		level = slog.LevelError
	}
	c.parent.logger.LogAttrs(context.Background(), level, e.Message, attrs...)
	return nil
}

func (c *slogCore) Sync() error { return nil }

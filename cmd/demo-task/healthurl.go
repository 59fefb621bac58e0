package main

// This file is where the healthcheck mode looks when it is given no URL:
// the /healthz of the port the task listens on. The task is PID 1 of its
// container (under docker-init too, its arguments follow), so its
// --listen is in /proc/1/cmdline; `task --listen :8081` is then probed
// on :8081, not on the default :8080.

import (
	"bytes"
	"net"
	"os"
	"strings"
)

// pid1Cmdline is the command line of the container's first process.
var pid1Cmdline = "/proc/1/cmdline"

// defaultHealthcheckURLNow is the URL healthcheck probes when given none:
// that of the --listen of PID 1 when it has one (and it can be read), the
// default one otherwise.
func defaultHealthcheckURLNow() string {
	cmdline, err := os.ReadFile(pid1Cmdline)
	if err != nil {
		return defaultHealthcheckURL // not Linux, or no /proc: the default port
	}
	return healthcheckURLOf(cmdline)
}

// healthcheckURLOf is the /healthz URL of the --listen address in a
// NUL-separated command line (as /proc/<pid>/cmdline holds it), on the
// loopback address when it listens on every address; the default URL
// when it has no --listen. The last --listen wins, as pflag takes it.
func healthcheckURLOf(cmdline []byte) string {
	args := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
	listen := ""
	for i, a := range args {
		switch {
		case a == "--listen" && i+1 < len(args):
			listen = args[i+1]
		case strings.HasPrefix(a, "--listen="):
			listen = strings.TrimPrefix(a, "--listen=")
		}
	}
	if listen == "" {
		return defaultHealthcheckURL
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" {
		return defaultHealthcheckURL
	}
	if ip := net.ParseIP(host); host == "" || host == "localhost" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz"
}

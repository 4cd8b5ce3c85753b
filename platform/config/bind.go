package config

import (
	"net"
	"strings"
)

// Every interface, spelled as the listener expects it.
const anyHost = ""

// HTTPListenHost is the host the HTTP listener binds: SVC_HTTP_BIND_ADDRESS,
// or by default loopback in mock mode (every caller is an administrator
// there, so it must not face a network by accident) and every interface in
// jwt mode.
func (c *Config) HTTPListenHost() string { return c.listenHost(c.HTTPBindAddress) }

// GRPCListenHost is HTTPListenHost for the gRPC listener.
func (c *Config) GRPCListenHost() string { return c.listenHost(c.GRPCBindAddress) }

func (c *Config) listenHost(set string) string {
	switch set {
	case "":
		if c.IAMMode == "jwt" {
			return anyHost
		}
		return "127.0.0.1"
	case "*":
		return anyHost
	}
	return set
}

// DescribeHost names a listen host for the startup banner.
func DescribeHost(h string) string {
	if h == anyHost {
		return "every interface"
	}
	return h
}

// loopbackHost reports whether a listen host reaches only this machine: a
// loopback IP or localhost. Every interface ("") and any other name or
// address do not.
func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

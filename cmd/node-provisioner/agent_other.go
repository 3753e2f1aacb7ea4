//go:build !linux

package main

// runAgent does nothing off Linux: the discovery agent is Linux's /init.
func runAgent() {}

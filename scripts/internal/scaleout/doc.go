// Package scaleout is what the scale-out drivers (scripts/bridgescale,
// scripts/gatewayscale) share: child processes in process groups of their
// own, HAProxy in front of replicas, the outcome of a call told from its
// typed error, and the replica that answered each response.
package scaleout
